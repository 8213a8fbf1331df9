// Hides credentials in text a provider sent back (error bodies, status lines, SSE and realtime error
// events) before it reaches a client, a log entry or a file: providers echo the key they were given
// ("Incorrect API key provided: sk-...abcd"), sometimes whole, sometimes cut.

/** The shortest slice of a credential that is hidden wherever it appears. */
const MIN_SLICE = 8;

/** `sk-...abcd`: enough to tell keys apart, too little to use one. Short secrets are hidden whole. */
export function maskSecret(secret: string): string {
  if (secret.length < 12) return '***';
  return `${secret.slice(0, 3)}...${secret.slice(-4)}`;
}

/** Masks every credential used for one call, and any slice of 8 or more characters of one, in text. */
export class SecretMasker {
  private readonly secrets: string[];
  // Every 8-character window of every secret, to the secret it belongs to.
  private readonly windows = new Map<string, string>();

  constructor(secrets: Array<string | undefined | null>) {
    this.secrets = [...new Set(secrets.filter((s): s is string => typeof s === 'string' && s.length >= 4))];
    for (const secret of this.secrets) {
      for (let i = 0; i + MIN_SLICE <= secret.length; i++) {
        this.windows.set(secret.slice(i, i + MIN_SLICE), secret);
      }
    }
  }

  get empty(): boolean {
    return this.secrets.length === 0;
  }

  mask(text: string): string {
    if (this.empty || text.length === 0) return text;
    let out = text;
    // Whole secrets shorter than a window are still hidden where they appear in full.
    for (const secret of this.secrets) {
      if (secret.length < MIN_SLICE) out = out.split(secret).join(maskSecret(secret));
    }
    if (this.windows.size === 0 || out.length < MIN_SLICE) return out;
    // Ranges covered by any window, merged; each maximal range is replaced once.
    const ranges: Array<{ start: number; end: number; secret: string }> = [];
    for (let i = 0; i + MIN_SLICE <= out.length; i++) {
      const secret = this.windows.get(out.slice(i, i + MIN_SLICE));
      if (secret === undefined) continue;
      const last = ranges[ranges.length - 1];
      if (last && i <= last.end) last.end = i + MIN_SLICE;
      else ranges.push({ start: i, end: i + MIN_SLICE, secret });
    }
    if (ranges.length === 0) return out;
    let result = '';
    let at = 0;
    for (const r of ranges) {
      result += out.slice(at, r.start) + maskSecret(r.secret);
      at = r.end;
    }
    return result + out.slice(at);
  }

  /** Masks every string inside a JSON value (keys included), returning a copy. */
  maskValue<T>(value: T): T {
    if (this.empty) return value;
    return JSON.parse(this.mask(JSON.stringify(value))) as T;
  }
}

// Request headers that carry a provider credential.
const CREDENTIAL_HEADERS = [
  'authorization',
  'api-key',
  'x-api-key',
  'x-goog-api-key',
  'x-amz-security-token',
];

/** The credentials in one header value: a bearer token, a SigV4 signature and access key, or the value. */
function headerSecrets(name: string, value: string): string[] {
  if (name !== 'authorization') return [value];
  if (value.startsWith('AWS4-')) {
    const signature = /Signature=([0-9a-f]+)/i.exec(value)?.[1];
    const accessKey = /Credential=([^/,\s]+)/i.exec(value)?.[1];
    return [signature, accessKey].filter((s): s is string => !!s);
  }
  const cut = value.indexOf(' ');
  return [cut === -1 ? value : value.slice(cut + 1).trim()];
}

/** A JSON credential (Bedrock access keys) is its secret fields; its region is no secret. */
function credentialParts(credential: string): string[] {
  if (!credential.trim().startsWith('{')) return [credential];
  try {
    return Object.entries(JSON.parse(credential) as Record<string, unknown>)
      .filter(([k, v]) => k !== 'region' && typeof v === 'string' && v.length >= 8)
      .map(([, v]) => v as string);
  } catch {
    return [credential];
  }
}

/**
 * A masker for every credential one call used: the target's credential (and each field of a JSON one,
 * such as Bedrock access keys) and whatever credential headers went upstream.
 */
export function credentialMasker(
  credential: string | undefined,
  sentHeaders: Record<string, string> = {},
): SecretMasker {
  const secrets: string[] = [];
  if (credential) secrets.push(...credentialParts(credential));
  for (const [name, value] of Object.entries(sentHeaders)) {
    if (CREDENTIAL_HEADERS.includes(name.toLowerCase()))
      secrets.push(...headerSecrets(name.toLowerCase(), value));
  }
  return new SecretMasker(secrets);
}
