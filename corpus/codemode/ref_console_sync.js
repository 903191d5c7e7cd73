console.log("starting sync run", { n: 1 });
const repo = github.get_repo({ owner: "acme", repo: "anvil" });
const logged = console.log("repo", repo.full_name);
console.error("stars:", repo.stars);
({ logged: logged === undefined, name: repo.full_name });
