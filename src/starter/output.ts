/** Plain-text renderings of results for people; scripts use --json. */

/** `key: value` lines; nested values inline as JSON. */
export function renderFields(value: unknown): string {
  if (typeof value !== 'object' || value === null) return String(value);
  return Object.entries(value as Record<string, unknown>)
    .filter(([, v]) => v !== undefined)
    .map(([k, v]) => `${k}: ${typeof v === 'object' && v !== null ? JSON.stringify(v) : String(v)}`)
    .join('\n');
}

/** A left-aligned table with a header row. */
export function renderTable(rows: Array<Record<string, unknown>>, columns: string[]): string {
  const cells = [columns, ...rows.map((r) => columns.map((c) => String(r[c] ?? '')))];
  const widths = columns.map((_, i) => Math.max(...cells.map((row) => row[i].length)));
  return cells.map((row) => row.map((cell, i) => cell.padEnd(widths[i])).join('  ').trimEnd()).join('\n');
}
