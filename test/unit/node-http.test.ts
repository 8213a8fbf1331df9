import nodeHttp from 'node:http';
import { describe, expect, it } from 'vitest';
import http from '../../functions/core/node-http';

// What Lambda bundles get for `node:http` is Node's own module object, so every call through it is Node's.

describe('node:http in the bundles', () => {
  it("is Node's own module", () => {
    expect(http).toBe(nodeHttp);
    expect(http.request).toBe(nodeHttp.request);
    expect(http.Agent).toBe(nodeHttp.Agent);
  });
});
