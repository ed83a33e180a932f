// The `cfn-response` module a Node.js function written inline (`Code: {ZipFile: ...}`) can require, as
// CloudFormation provides it: send(event, context, responseStatus, responseData, physicalResourceId,
// noEcho, reason) PUTs the response document to event.ResponseURL, then calls context.done(). It
// follows the URL's scheme (the local cloud's ResponseURL is http) and returns a promise.
"use strict";
const http = require("http");
const https = require("https");

exports.SUCCESS = "SUCCESS";
exports.FAILED = "FAILED";

exports.send = function send(event, context, responseStatus, responseData, physicalResourceId, noEcho, reason) {
  const body = JSON.stringify({
    Status: responseStatus,
    Reason: reason || `See the details in CloudWatch Log Stream: ${context.logStreamName}`,
    PhysicalResourceId: physicalResourceId || context.logStreamName,
    StackId: event.StackId,
    RequestId: event.RequestId,
    LogicalResourceId: event.LogicalResourceId,
    NoEcho: noEcho || false,
    Data: responseData,
  });
  const url = new URL(event.ResponseURL);
  const client = url.protocol === "http:" ? http : https;
  return new Promise((resolve, reject) => {
    const request = client.request(url, {
      method: "PUT",
      headers: { "content-type": "", "content-length": Buffer.byteLength(body) },
    }, (response) => {
      console.log(`Status code: ${response.statusCode}`);
      response.resume();
      response.on("end", () => { context.done(); resolve(); });
    });
    request.on("error", (error) => {
      console.log(`send(..) failed executing https.request(..): ${error}`);
      context.done();
      reject(error);
    });
    request.write(body);
    request.end();
  });
};
