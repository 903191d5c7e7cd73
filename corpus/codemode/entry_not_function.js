const config = { retries: 3 };
console.log("evaluating");
config;
