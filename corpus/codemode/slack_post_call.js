async () => {
  const members = await slack.list_members({ channel });
  const names = members.filter((m) => !m.is_bot).map((m) => `<@${m.id}>`);
  const text = `Standup in 5 minutes: ${names.join(", ")}`;
  const posted = await slack.post_message({ channel, text });
  console.log("posted %s at %s", posted.ts, posted.channel);
  return { ts: posted.ts, mentioned: names.length };
}
