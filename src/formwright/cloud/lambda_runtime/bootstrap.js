// The child side of one Node.js function invocation: Lambda's Node.js runtime, in a few lines.
//
// Run by the local cloud as `node bootstrap.js SPEC`. It resolves the handler as Lambda does
// (`index.handler`, `src/app.handler`, `index.nested.fn`; the module file `.js`, `.mjs` or `.cjs`
// in the function's code), calls it with the event and a context (async or callback style), and
// writes the response (JSON) or Lambda's error document ({errorType, errorMessage, trace}) to the
// files the spec names. console.* write as Lambda's do: `timestamp\trequest id\tLEVEL\tmessage`.
"use strict";
const fs = require("fs");
const path = require("path");
const util = require("util");
const { pathToFileURL } = require("url");

const spec = JSON.parse(fs.readFileSync(process.argv[2], "utf8"));
const requestId = spec.context.aws_request_id;
let finished = false;

for (const [name, level] of [["log", "INFO"], ["info", "INFO"], ["warn", "WARN"], ["error", "ERROR"],
                             ["debug", "DEBUG"], ["trace", "TRACE"]]) {
  console[name] = (...args) => {
    process.stdout.write(`${new Date().toISOString()}\t${requestId}\t${level}\t${util.format(...args)}\n`);
  };
}

function leave() {
  process.stdout.write("", () => process.exit(0));
}

function fail(errorType, errorMessage, trace) {
  if (finished) return;
  finished = true;
  const document = { errorType, errorMessage, trace: trace || [] };
  process.stdout.write(`${new Date().toISOString()}\t${requestId}\tERROR\tInvoke Error \t${JSON.stringify(document)}\n`);
  fs.writeFileSync(spec.error, JSON.stringify(document));
  leave();
}

function failWith(err, errorType) {
  if (err instanceof Error) {
    fail(errorType || err.name || "Error", String(err.message), String(err.stack || "").split("\n"));
  } else {
    fail(errorType || typeof err, typeof err === "string" ? err : JSON.stringify(err), []);
  }
}

function succeed(result, waitForEmptyLoop) {
  if (finished) return;
  let text;
  try {
    text = JSON.stringify(result === undefined ? null : result);
  } catch (err) {
    fail("Runtime.MarshalError", `Unable to stringify response body: ${err.message}`, []);
    return;
  }
  finished = true;
  const write = () => { fs.writeFileSync(spec.response, text); leave(); };
  if (waitForEmptyLoop) process.once("beforeExit", write); else write();
}

async function load() {
  const handler = spec.handler;
  const slash = handler.lastIndexOf("/");
  const dot = handler.indexOf(".", slash + 1);
  if (dot < 0) {
    fail("Runtime.MalformedHandlerName", "Bad handler", []);
    return null;
  }
  const moduleName = handler.slice(0, dot);
  const names = handler.slice(dot + 1).split(".");
  const base = path.resolve(spec.task_root, moduleName);
  const file = [".js", ".mjs", ".cjs"].map((ext) => base + ext).find((f) => fs.existsSync(f));
  let mod;
  try {
    if (!file) {
      const err = new Error(`Cannot find module '${moduleName}'\nRequire stack:\n- ${__filename}`);
      throw Object.assign(err, { code: "MODULE_NOT_FOUND" });
    }
    if (file.endsWith(".mjs")) {
      mod = await import(pathToFileURL(file).href);
    } else {
      try {
        mod = require(file);
      } catch (err) {
        if (err.code !== "ERR_REQUIRE_ESM") throw err;
        mod = await import(pathToFileURL(file).href);
      }
    }
  } catch (err) {
    if (err.code === "MODULE_NOT_FOUND" || err.code === "ERR_MODULE_NOT_FOUND") {
      const lines = String(err.stack || err).split("\n").filter((line) => line.startsWith("    at "));
      fail("Runtime.ImportModuleError", String(err), [`Runtime.ImportModuleError: ${err}`, ...lines]);
      return null;
    }
    failWith(err, err instanceof SyntaxError ? "Runtime.UserCodeSyntaxError" : undefined);
    return null;
  }
  let target = mod;
  for (const name of names) target = target == null ? undefined : (target[name] ?? target.default?.[name]);
  if (typeof target !== "function") {
    fail("Runtime.HandlerNotFound", `${handler} is undefined or not exported`, []);
    return null;
  }
  return target;
}

function context() {
  const c = spec.context;
  const ctx = {
    functionName: c.function_name,
    functionVersion: c.function_version,
    invokedFunctionArn: c.invoked_function_arn,
    memoryLimitInMB: c.memory_limit_in_mb,
    awsRequestId: requestId,
    logGroupName: c.log_group_name,
    logStreamName: c.log_stream_name,
    callbackWaitsForEmptyEventLoop: true,
    getRemainingTimeInMillis: () => Math.max(0, Math.round(spec.deadline * 1000 - Date.now())),
  };
  ctx.succeed = (result) => succeed(result, false);
  ctx.fail = (err) => failWith(err);
  ctx.done = (err, result) => (err ? failWith(err) : succeed(result, false));
  return ctx;
}

process.on("uncaughtException", (err) => failWith(err));
process.on("unhandledRejection", (err) => failWith(err));

(async () => {
  const handler = await load();
  if (!handler) return;
  const event = JSON.parse(fs.readFileSync(spec.event, "utf8"));
  const ctx = context();
  const callback = (err, result) => (err ? failWith(err) : succeed(result, ctx.callbackWaitsForEmptyEventLoop));
  let returned;
  try {
    returned = handler(event, ctx, callback);
  } catch (err) {
    failWith(err);
    return;
  }
  if (returned && typeof returned.then === "function") {
    returned.then((result) => succeed(result, false), (err) => failWith(err));
  }
})();
