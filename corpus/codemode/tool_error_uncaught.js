const issues = await github.list_issues({ repo: "acme/anvil" });
console.log("got %d issues", issues.length);
const details = await github.get_issue({ repo: "acme/anvil", number: issues[0] });
console.log("never logged", details);
details;
