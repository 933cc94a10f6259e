// Preloaded (node --require) into the conformance suite run by agcore's
// tests: every server that listens on a bare port is bound to 127.0.0.1
// instead of every interface. The suite reads a server's address right
// after listen(), so the bind must stay synchronous: the lookup of an IP
// literal answers at once instead of on the next tick.
const net = require("node:net");
const dns = require("node:dns");

const lookup = dns.lookup;
dns.lookup = function (host, options, callback) {
  if (typeof options === "function") {
    callback = options;
    options = {};
  }
  const family = net.isIP(host);
  if (family === 0) {
    return lookup.call(this, host, options, callback);
  }
  if (options && options.all) {
    callback(null, [{ address: host, family }]);
  } else {
    callback(null, host, family);
  }
  return {};
};

const listen = net.Server.prototype.listen;
net.Server.prototype.listen = function (...args) {
  const port = args[0];
  if ((typeof port === "number" || (typeof port === "string" && /^\d+$/.test(port))) && typeof args[1] !== "string") {
    args.splice(1, 0, "127.0.0.1");
  } else if (port && typeof port === "object" && port.host === undefined && port.path === undefined) {
    args[0] = { ...port, host: "127.0.0.1" };
  }
  return listen.apply(this, args);
};
