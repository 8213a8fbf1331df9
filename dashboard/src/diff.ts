export type DiffLine = { kind: 'same' | 'add' | 'del'; text: string };

/** A line diff by longest common subsequence: prompt versions are short, so the square table is cheap. */
export function lineDiff(before: string, after: string): DiffLine[] {
  const a = before.split('\n');
  const b = after.split('\n');
  const lcs: number[][] = Array.from({ length: a.length + 1 }, () => new Array<number>(b.length + 1).fill(0));
  for (let i = a.length - 1; i >= 0; i--) {
    for (let j = b.length - 1; j >= 0; j--) {
      const row = lcs[i] as number[];
      row[j] =
        a[i] === b[j]
          ? ((lcs[i + 1] as number[])[j + 1] as number) + 1
          : Math.max((lcs[i + 1] as number[])[j] as number, row[j + 1] as number);
    }
  }
  const out: DiffLine[] = [];
  let i = 0;
  let j = 0;
  while (i < a.length && j < b.length) {
    if (a[i] === b[j]) {
      out.push({ kind: 'same', text: a[i] as string });
      i++;
      j++;
    } else if (((lcs[i + 1] as number[])[j] as number) >= ((lcs[i] as number[])[j + 1] as number)) {
      out.push({ kind: 'del', text: a[i++] as string });
    } else out.push({ kind: 'add', text: b[j++] as string });
  }
  while (i < a.length) out.push({ kind: 'del', text: a[i++] as string });
  while (j < b.length) out.push({ kind: 'add', text: b[j++] as string });
  return out;
}
