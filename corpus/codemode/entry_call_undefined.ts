declare const slack: { post_message(args: { channel: string; text: string; thread_ts?: string }): Promise<{ ts: string }> };

async ({ channel, lines }: { channel: string; lines: string[] }) => {
  const head = await slack.post_message({ channel, text: lines[0] });
  for (const text of lines.slice(1)) {
    await slack.post_message({ channel, text, thread_ts: head.ts });
  }
  console.log(`posted ${lines.length} messages in thread ${head.ts}`);
};
