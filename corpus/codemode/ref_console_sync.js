console.log("starting sync run", { n: 1 });
const repo = github.get_repo({ owner: "acme", repo: "anvil" });
const logged = console.log("repo", repo.full_name);
let sinkError = null;
try {
  console.error("stars:", repo.stars);
} catch (e) {
  sinkError = `${e.name}: ${e.message}`;
}
({ logged: logged === undefined, name: repo.full_name, sinkError });
