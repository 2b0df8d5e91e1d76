/** Small statistics and output helpers for the benchmark. */
export function quantile(values: number[], q: number): number {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const at = (sorted.length - 1) * q;
  const low = Math.floor(at);
  const high = Math.ceil(at);
  return sorted[low]! + (sorted[high]! - sorted[low]!) * (at - low);
}

export const median = (values: number[]) => quantile(values, 0.5);
export const p95 = (values: number[]) => quantile(values, 0.95);

export const ms = (value: number) => (Number.isFinite(value) ? `${value.toFixed(value < 10 ? 2 : 1)} ms` : '—');

export function table(header: string[], rows: Array<Array<string | number>>): string {
  const line = (cells: Array<string | number>) => `| ${cells.join(' | ')} |`;
  return [line(header), line(header.map(() => '---')), ...rows.map(line)].join('\n');
}

/** A horizontal bar chart as a standalone SVG. */
export function barChart(title: string, bars: Array<{ label: string; value: number; unit: string }>): string {
  const width = 720;
  const row = 26;
  const left = 280;
  const top = 40;
  const max = Math.max(...bars.map((b) => b.value), 1e-9);
  const height = top + bars.length * row + 20;
  const escapeXml = (text: string) => text.replace(/&/g, '&amp;').replace(/</g, '&lt;');
  const rows = bars
    .map((bar, i) => {
      const y = top + i * row;
      const w = Math.max(1, ((width - left - 90) * bar.value) / max);
      return [
        `<text x="${left - 8}" y="${y + 16}" text-anchor="end">${escapeXml(bar.label)}</text>`,
        `<rect x="${left}" y="${y + 4}" width="${w.toFixed(1)}" height="${row - 8}" fill="#5b4bdb" rx="3"/>`,
        `<text x="${left + w + 6}" y="${y + 16}">${bar.value.toFixed(bar.value < 10 ? 2 : 1)} ${escapeXml(bar.unit)}</text>`,
      ].join('');
    })
    .join('\n');
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" font-family="system-ui, sans-serif" font-size="13">
<rect width="100%" height="100%" fill="#fff"/>
<text x="16" y="24" font-size="16" font-weight="600">${escapeXml(title)}</text>
${rows}
</svg>
`;
}
