// Preloaded (node --require) into MCP servers started by agcore's tests:
// a server that listens on a bare port is bound to 127.0.0.1 instead of
// every interface, and the port it got is announced on stderr as
// "AGCORE_LISTENING <port>" (the tests start servers with PORT=0).
const net = require("node:net");
const listen = net.Server.prototype.listen;
net.Server.prototype.listen = function (...args) {
  const port = args[0];
  if (typeof port === "number" || (typeof port === "string" && /^\d+$/.test(port))) {
    if (typeof args[1] !== "string") {
      args.splice(1, 0, "127.0.0.1");
    }
    this.once("listening", () => {
      process.stderr.write(`AGCORE_LISTENING ${this.address().port}\n`);
    });
  }
  return listen.apply(this, args);
};
