const pad = (n: number) => String(n).padStart(2, '0');

/** Local time, to the second, sortable by eye. */
export function formatTime(iso: string): string {
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return iso;
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`;
}

/** USD with enough decimals for fractions of a cent, which single requests usually cost. */
export function formatCost(usd: number | null | undefined): string {
  if (usd === null || usd === undefined) return '—';
  if (usd === 0) return '$0';
  if (usd < 0.000001) return '<$0.000001';
  return `$${usd >= 1 ? usd.toFixed(2) : usd.toPrecision(3).replace(/0+$/, '').replace(/\.$/, '')}`;
}

export function formatMs(ms: number | null | undefined): string {
  if (ms === null || ms === undefined) return '—';
  return ms >= 10_000 ? `${(ms / 1000).toFixed(1)} s` : `${Math.round(ms)} ms`;
}

export function formatCount(n: number): string {
  return n.toLocaleString('en-US');
}
