'use strict';
// Preloaded with `node -r ./preload.cjs …` by FreeCode's tests and benchmarks.
// server-everything (and most express-based MCP servers) call
// app.listen(PORT), which binds every interface; tests must only ever be
// reachable on loopback. This makes a listen() without a host bind
// 127.0.0.1. Unix sockets, handles and explicit hosts are left alone.
const net = require('net');

const LOOPBACK = '127.0.0.1';
const listen = net.Server.prototype.listen;

function isPort(v) {
  return typeof v === 'number' || (typeof v === 'string' && /^\d+$/.test(v));
}

net.Server.prototype.listen = function (...args) {
  const first = args[0];
  if (isPort(first)) {
    // listen(port[, host][, backlog][, cb])
    if (typeof args[1] !== 'string') args.splice(1, 0, LOOPBACK);
  } else if (first === undefined || typeof first === 'function') {
    // listen([cb]): a random port
    args.unshift(0, LOOPBACK);
  } else if (first !== null && typeof first === 'object' && first.path === undefined &&
             first.fd === undefined && first._handle === undefined && first.host === undefined &&
             !(first instanceof net.Server) && !(first instanceof net.Socket)) {
    // listen({port, …}[, cb])
    args[0] = Object.assign({}, first, { host: LOOPBACK });
  }
  return listen.apply(this, args);
};
