declare const ci: { get_job(args: { id: number }): Promise<{ id: number; status: string; progress: number }> };

async ({ jobs }: { jobs: number[] }) => {
  const counts: Record<string, number> = {};
  for (const [i, id] of jobs.entries()) {
    console.log(`step ${i + 1}: asking for job ${id}`);
    const job = await ci.get_job({ id });
    counts[job.status] = (counts[job.status] ?? 0) + 1;
    console.info("job %d is %s (%d%%)", job.id, job.status, job.progress);
    if (job.status !== "done") console.debug("  still waiting on", job);
    if (job.progress > 80) console.warn(`job ${id} progress ${job.progress} looks off`);
  }
  console.log("counts", counts);
  return counts;
};
