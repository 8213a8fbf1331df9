import { describe, expect, it } from 'vitest';
import type { GatewayConfig } from '../../functions/core/gateway-config';
import { settings } from '../../functions/core/settings';
import {
  buildPlan,
  DEFAULT_RETRY_STATUSES,
  type PlanGroup,
  type PlanTarget,
} from '../../functions/gateway/plan';

const asTarget = (node: ReturnType<typeof buildPlan>) => {
  expect(node.kind).toBe('target');
  return node as PlanTarget;
};
const asGroup = (node: ReturnType<typeof buildPlan>) => {
  expect(node.kind).toBe('group');
  return node as PlanGroup;
};

describe('buildPlan', () => {
  it('turns no config into one target with the defaults', () => {
    const t = asTarget(buildPlan(undefined));
    expect(t).toMatchObject({
      index: '0',
      providerOptions: {},
      overrideParams: {},
      timeoutMs: settings().upstreamTimeoutMs,
      retry: { attempts: 0, onStatusCodes: DEFAULT_RETRY_STATUSES },
      weight: 1,
    });
    expect(t.provider).toBeUndefined();
    expect(t.virtualKey).toBeUndefined();
  });

  it('names the config field each route value came from', () => {
    const t = asTarget(buildPlan({ provider: 'anthropic', custom_host: 'http://h.example' }));
    expect(t.provider).toEqual({ value: 'anthropic', param: 'config.provider' });
    expect(t.customHost).toEqual({ value: 'http://h.example', param: 'config.custom_host' });
  });

  it('reads "@slug" in provider as a virtual key', () => {
    const t = asTarget(buildPlan({ provider: '@team-openai' }));
    expect(t.virtualKey).toEqual({ value: 'team-openai', param: 'config.provider' });
    expect(t.provider).toBeUndefined();
  });

  it("lets the request's own route replace the root config's route", () => {
    const config: GatewayConfig = { provider: 'openai', virtual_key: 'vk-a', override_params: { top_p: 1 } };
    const t = asTarget(buildPlan(config, { virtualKey: { value: 'vk-b', param: 'x-gateway-virtual-key' } }));
    expect(t.virtualKey).toEqual({ value: 'vk-b', param: 'x-gateway-virtual-key' });
    expect(t.provider).toBeUndefined();
    // Everything but the route still comes from the config.
    expect(t.overrideParams).toEqual({ top_p: 1 });
  });

  it('builds a fallback group whose targets carry index paths and field paths', () => {
    const g = asGroup(
      buildPlan({
        strategy: { mode: 'fallback', on_status_codes: [429] },
        targets: [{ provider: 'openai' }, { virtual_key: 'backup' }],
      }),
    );
    expect(g.mode).toBe('fallback');
    expect(g.onStatusCodes).toEqual([429]);
    const [a, b] = g.targets.map((n) => n as PlanTarget);
    expect(a?.index).toBe('0');
    expect(b?.index).toBe('1');
    expect(b?.virtualKey).toEqual({ value: 'backup', param: 'config.targets[1].virtual_key' });
  });

  it('never lets a target that names its own route inherit its parent credential or host', () => {
    const g = asGroup(
      buildPlan({
        api_key: 'sk-parent',
        custom_host: 'http://parent.example',
        provider: 'openai',
        strategy: { mode: 'fallback' },
        targets: [{}, { provider: 'anthropic' }],
      }),
    );
    const [inherits, own] = g.targets.map((n) => n as PlanTarget);
    expect(inherits?.apiKey).toBe('sk-parent');
    expect(inherits?.customHost?.value).toBe('http://parent.example');
    expect(own?.provider?.value).toBe('anthropic');
    expect(own?.apiKey).toBeUndefined();
    expect(own?.customHost).toBeUndefined();
  });

  it('merges override_params one by one and inherits retry, timeout and account ids', () => {
    const g = asGroup(
      buildPlan({
        override_params: { temperature: 0, top_p: 0.5 },
        request_timeout: 1234,
        retry: { attempts: 2 },
        vendor_organization: 'org-1',
        region: 'eu-west-1',
        strategy: { mode: 'loadbalance' },
        targets: [{ override_params: { temperature: 1 }, deployment_id: 'd1', weight: 3 }],
      }),
    );
    const t = g.targets[0] as PlanTarget;
    expect(t.overrideParams).toEqual({ temperature: 1, top_p: 0.5 });
    expect(t.timeoutMs).toBe(1234);
    expect(t.retry).toEqual({ attempts: 2, onStatusCodes: DEFAULT_RETRY_STATUSES });
    expect(t.organization).toBe('org-1');
    expect(t.providerOptions).toEqual({
      region: 'eu-west-1',
      deploymentId: 'd1',
      resourceName: undefined,
      apiVersion: undefined,
    });
    expect(t.weight).toBe(3);
  });

  it('nests groups with dotted index paths', () => {
    const g = asGroup(
      buildPlan({
        strategy: { mode: 'fallback' },
        targets: [
          { strategy: { mode: 'loadbalance' }, targets: [{ provider: 'openai' }, { provider: 'google' }] },
          { provider: 'anthropic' },
        ],
      }),
    );
    const inner = g.targets[0] as PlanGroup;
    expect(inner.kind).toBe('group');
    expect(inner.targets.map((n) => n.index)).toEqual(['0.0', '0.1']);
    expect((inner.targets[1] as PlanTarget).provider?.param).toBe('config.targets[0].targets[1].provider');
  });

  it('treats strategy "single" with targets as one target', () => {
    const t = asTarget(
      buildPlan({ provider: 'openai', strategy: { mode: 'single' }, targets: [{ provider: 'x' }] }),
    );
    expect(t.provider?.value).toBe('openai');
  });
});
