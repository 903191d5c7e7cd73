const plain = new Error("something broke");
console.log(plain);
console.error("failed:", new TypeError("bad type"));
console.log({ err: new RangeError("out of range"), ok: false });
console.log([new Error("in array")]);
const withProps = new Error("with props");
withProps.status = 404;
withProps.detail = { path: "/x" };
console.log(withProps);
class AppError extends Error {
  constructor(message, code) {
    super(message);
    this.name = "AppError";
    this.code = code;
  }
}
console.warn(new AppError("custom", "E_APP"));
console.log(String(new AppError("as string", 1)));
console.log("%s", new Error("via %s"));
const caused = new Error("outer", { cause: new Error("inner") });
console.log(caused.message, caused.cause.message);
"logged";
