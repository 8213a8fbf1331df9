import type { GatewayConfig } from '../core/gateway-config';
import type { ModelCallState } from '../core/http';
import { buildPlan, type PlanNode, type RouteOverrides } from './plan';
import { policies } from './policy';
import {
  checkRouteHosts,
  type ResolvedTarget,
  readConfig,
  resolveTarget,
  routeOverrides,
  splitModel,
} from './target';

// Pipeline stage "plan": the request's config (its own, or its policy's), the routing plan built from it
// and the request's route headers, and the model the provider sees. Reads the request; reserves nothing.

/** The request's gateway config, read once per request and kept on its state. */
export async function requestConfig(state: ModelCallState): Promise<GatewayConfig | undefined> {
  if (state.config === undefined) {
    // A request that names no config gets its API key's or workspace's policy config.
    state.config =
      (await readConfig(state.headers, state.principal)) ??
      (await policies.forRequest(state)).defaultConfig ??
      null;
  }
  return state.config ?? undefined;
}

/** Whether the request itself names where it goes, so that a stored default must not apply. */
function namesOwnRoute(headers: Record<string, string>, slug: string | undefined): boolean {
  return (
    !!slug ||
    !!headers['x-gateway-provider']?.trim() ||
    !!headers['x-gateway-virtual-key']?.trim() ||
    !!headers['x-gateway-config']?.trim()
  );
}

/**
 * The routing plan of a model call, and the model the provider sees (without any `@slug/`). `defaults`
 * is a route used only when the request names none itself (a stored prompt's provider or virtual key).
 */
export async function planFor(
  state: ModelCallState,
  rawModel: string | undefined,
  defaults?: RouteOverrides,
): Promise<{ plan: PlanNode; model: string | undefined }> {
  // `@slug/model` names a virtual key; the provider only ever sees the model.
  const { model, slug } =
    rawModel === undefined ? { model: undefined, slug: undefined } : splitModel(rawModel);
  const own = routeOverrides(state.headers, slug);
  const overrides = defaults && !namesOwnRoute(state.headers, slug) ? { ...defaults, ...own } : own;
  const config = await requestConfig(state);
  const plan = buildPlan(config, overrides);
  await checkRouteHosts(plan, state.headers, state.principal, config);
  return { plan, model };
}

/** The target a plan tries first, resolved (credentials included): for calls beside the model call. */
export async function firstTarget(state: ModelCallState, plan: PlanNode): Promise<ResolvedTarget> {
  let node = plan;
  while (node.kind === 'group') node = node.targets[0] as PlanNode;
  return resolveTarget(node, state.headers, state.principal);
}
