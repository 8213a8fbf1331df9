// Anthropic's model names (what Claude Code and the Anthropic SDKs send) as the ids Bedrock runs. A name
// in the table becomes its Bedrock model id behind the cross-region inference profile of the call's
// region (`us.`, `eu.`, `apac.`): Claude 4 models run only through such a profile. Anything else (a
// Bedrock id, a profile id or ARN, another vendor's model) passes through as given.

const CLAUDE_ON_BEDROCK: Record<string, string> = {
  'claude-opus-4-5': 'anthropic.claude-opus-4-5-20251101-v1:0',
  'claude-opus-4-1': 'anthropic.claude-opus-4-1-20250805-v1:0',
  'claude-opus-4': 'anthropic.claude-opus-4-20250514-v1:0',
  'claude-opus-4-0': 'anthropic.claude-opus-4-20250514-v1:0',
  'claude-sonnet-4-5': 'anthropic.claude-sonnet-4-5-20250929-v1:0',
  'claude-sonnet-4': 'anthropic.claude-sonnet-4-20250514-v1:0',
  'claude-sonnet-4-0': 'anthropic.claude-sonnet-4-20250514-v1:0',
  'claude-haiku-4-5': 'anthropic.claude-haiku-4-5-20251001-v1:0',
  'claude-3-7-sonnet': 'anthropic.claude-3-7-sonnet-20250219-v1:0',
  'claude-3-5-sonnet': 'anthropic.claude-3-5-sonnet-20241022-v2:0',
  'claude-3-5-sonnet-20240620': 'anthropic.claude-3-5-sonnet-20240620-v1:0',
  'claude-3-5-haiku': 'anthropic.claude-3-5-haiku-20241022-v1:0',
  'claude-3-opus': 'anthropic.claude-3-opus-20240229-v1:0',
  'claude-3-haiku': 'anthropic.claude-3-haiku-20240307-v1:0',
};

/** The geography of a region's cross-region inference profiles; undefined where there is none. */
function geography(region: string): string | undefined {
  if (region.startsWith('us-gov-')) return 'us-gov';
  if (region.startsWith('us-')) return 'us';
  if (region.startsWith('eu-')) return 'eu';
  if (region.startsWith('ap-')) return 'apac';
  return undefined;
}

/** The Bedrock id of `model` in `region`: a mapped Anthropic name, or `model` unchanged. */
export function bedrockModelId(model: string, region: string): string {
  // A dated name (`claude-3-5-haiku-20241022`) or `-latest` names the same model as the bare name,
  // unless the table has the dated name itself (an older snapshot).
  const base = Object.hasOwn(CLAUDE_ON_BEDROCK, model) ? model : model.replace(/-(?:\d{8}|latest)$/, '');
  if (!Object.hasOwn(CLAUDE_ON_BEDROCK, base)) return model;
  const id = CLAUDE_ON_BEDROCK[base] as string;
  const geo = geography(region);
  return geo ? `${geo}.${id}` : id;
}
