async function main() {
  const fastest = await Promise.race([mirror.fetch({ host: "eu" }), mirror.fetch({ host: "us" })]);
  console.log("race winner:", fastest);
  const any = await Promise.any([mirror.fetch({ host: "ap" }), mirror.fetch({ host: "sa" })]);
  console.log("any:", any);
  try {
    await Promise.any([mirror.fetch({ host: "x" }), mirror.fetch({ host: "y" })]);
  } catch (e) {
    console.log(e.constructor.name, e.errors.map((x) => x.message));
  }
  return { fastest, any };
}
main();
