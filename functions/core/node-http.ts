// What Lambda bundles get for `node:http` (lib/bundling.ts ALIASES): Node's own module object, not an ESM
// namespace of it. On Node 22, Lambda's runtime, an ESM `import` of `node:http` builds the module's
// namespace, which reads every export, and three of them (`WebSocket`, `CloseEvent`, `MessageEvent`) are
// getters that load Node's bundled undici: about 25 ms of an 84 ms cold import, for classes the gateway
// never uses. `process.getBuiltinModule` (Node 20.16 and 22.3) hands back the module object with its
// getters unread.

const http = process.getBuiltinModule('node:http');

export default http;
