/** Plain-text renderings of results for people; scripts use --json. */

/** `key: value` lines; nested values inline as JSON. */
export function renderFields(value: unknown): string {
  if (typeof value !== 'object' || value === null) return String(value);
  return Object.entries(value as Record<string, unknown>)
    .filter(([, v]) => v !== undefined)
    .map(([k, v]) => `${k}: ${typeof v === 'object' && v !== null ? JSON.stringify(v) : String(v)}`)
    .join('\n');
}

export interface TableOptions {
  /** Columns aligned to the right (numbers); the others are left-aligned. */
  alignRight?: string[];
  /** A line of dashes under the header row. */
  rule?: boolean;
}

/** A table with a header row, left-aligned unless a column is named in `alignRight`. */
export function renderTable(rows: Array<Record<string, unknown>>, columns: string[], opts: TableOptions = {}): string {
  const cells = [columns, ...rows.map((r) => columns.map((c) => String(r[c] ?? '')))];
  const widths = columns.map((_, i) => Math.max(...cells.map((row) => row[i].length)));
  const right = columns.map((c) => opts.alignRight?.includes(c) ?? false);
  const line = (row: string[]) => row.map((cell, i) => (right[i] ? cell.padStart(widths[i]) : cell.padEnd(widths[i]))).join('  ').trimEnd();
  const lines = cells.map(line);
  if (opts.rule) lines.splice(1, 0, widths.map((w) => '-'.repeat(w)).join('  '));
  return lines.join('\n');
}
