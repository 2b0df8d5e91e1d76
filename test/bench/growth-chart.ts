/** The growth bench's chart (test/bench/growth.bench.ts): log-log lines of each figure against the store's size. */

/** What one figure becomes per 10× records: (last / first)^(1 / log10(lastSize / firstSize)). */
export function slopePer10x(firstSize: number, first: number, lastSize: number, last: number): number {
  return (last / first) ** (1 / Math.log10(lastSize / firstSize));
}

interface Sized {
  size: number;
  families: Record<string, Record<string, number>>;
  firstAnswer: { beyondWarm: number };
  heapMiB: number;
  storageMiB: number;
}

const COLOURS = ['#5b4bdb', '#d9480f', '#2b8a3e', '#1971c2', '#c2255c', '#e67700', '#0c8599', '#862e9c', '#495057', '#a61e4d'];
const escapeXml = (text: string) => text.replace(/&/g, '&amp;').replace(/</g, '&lt;');

/**
 * One panel per family (its figures in ms) and one for the worker (first answer beyond warm in ms,
 * heap and the origin's bytes in MiB); both axes logarithmic, one line per figure, its slope per 10×
 * records beside its name.
 */
export function growthChart(sizes: Sized[], families: string[], figures: readonly string[], label: Record<string, string>): string {
  const panels: Array<{ title: string; unit: string; lines: Array<{ name: string; points: Array<[number, number]> }> }> = families.map(
    (family) => ({
      title: family,
      unit: 'ms',
      lines: figures
        .map((f) => ({ name: label[f] ?? f, points: sizes.map((s): [number, number] => [s.size, s.families[family]?.[f] ?? NaN]) }))
        .filter((l) => l.points.some(([, v]) => Number.isFinite(v))),
    }),
  );
  panels.push({
    title: 'the worker',
    unit: 'ms / MiB',
    lines: [
      { name: 'first answer after a start, beyond warm (ms)', points: sizes.map((s) => [s.size, s.firstAnswer.beyondWarm]) },
      { name: 'heap after a collection (MiB)', points: sizes.map((s) => [s.size, s.heapMiB]) },
      { name: "origin's bytes (MiB)", points: sizes.map((s) => [s.size, s.storageMiB]) },
    ],
  });
  const pw = 720;
  const ph = 300;
  const plot = { left: 60, top: 36, width: 300, height: 220 };
  const columns = 2;
  const width = pw * columns;
  const height = ph * Math.ceil(panels.length / columns) + 40;
  const xs = sizes.map((s) => s.size);
  const [xMin, xMax] = [Math.min(...xs), Math.max(...xs)];
  const body = panels.map((panel, p) => {
    const ox = (p % columns) * pw;
    const oy = 40 + Math.floor(p / columns) * ph;
    const values = panel.lines.flatMap((l) => l.points.map(([, v]) => v)).filter((v) => Number.isFinite(v) && v > 0);
    const yMin = 10 ** Math.floor(Math.log10(Math.min(...values, 1)));
    const yMax = 10 ** Math.ceil(Math.log10(Math.max(...values, 1)));
    const x = (size: number) =>
      ox + plot.left + (xMax === xMin ? plot.width / 2 : (plot.width * Math.log10(size / xMin)) / Math.log10(xMax / xMin));
    const y = (v: number) => oy + plot.top + plot.height - (plot.height * Math.log10(v / yMin)) / Math.log10(yMax / yMin);
    const parts = [
      `<text x="${ox + plot.left}" y="${oy + 20}" font-size="14" font-weight="600">${escapeXml(panel.title)} (${panel.unit}, log)</text>`,
      `<rect x="${ox + plot.left}" y="${oy + plot.top}" width="${plot.width}" height="${plot.height}" fill="none" stroke="#ced4da"/>`,
    ];
    for (let decade = yMin; decade <= yMax; decade *= 10)
      parts.push(
        `<line x1="${ox + plot.left}" x2="${ox + plot.left + plot.width}" y1="${y(decade).toFixed(1)}" y2="${y(decade).toFixed(1)}" stroke="#f1f3f5"/>`,
        `<text x="${ox + plot.left - 6}" y="${(y(decade) + 4).toFixed(1)}" text-anchor="end" font-size="11">${decade}</text>`,
      );
    for (const size of xs)
      parts.push(
        `<text x="${x(size).toFixed(1)}" y="${oy + plot.top + plot.height + 16}" text-anchor="middle" font-size="11">${size.toLocaleString('en')}</text>`,
      );
    panel.lines.forEach((line, i) => {
      const colour = COLOURS[i % COLOURS.length]!;
      const points = line.points.filter(([, v]) => Number.isFinite(v) && v > 0);
      const path = points.map(([s, v], k) => `${k ? 'L' : 'M'}${x(s).toFixed(1)},${y(v).toFixed(1)}`).join(' ');
      parts.push(`<path d="${path}" fill="none" stroke="${colour}" stroke-width="2"/>`);
      for (const [s, v] of points) parts.push(`<circle cx="${x(s).toFixed(1)}" cy="${y(v).toFixed(1)}" r="3" fill="${colour}"/>`);
      const [f, l] = [points[0], points.at(-1)];
      const slope = f && l && l[0] > f[0] ? ` ×${slopePer10x(f[0], f[1], l[0], l[1]).toFixed(2)}/10×` : '';
      parts.push(
        `<rect x="${ox + plot.left + plot.width + 12}" y="${oy + plot.top + i * 18}" width="10" height="10" fill="${colour}"/>`,
        `<text x="${ox + plot.left + plot.width + 26}" y="${oy + plot.top + i * 18 + 9}" font-size="10">${escapeXml(line.name + slope)}</text>`,
      );
    });
    return parts.join('\n');
  });
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" font-family="system-ui, sans-serif" font-size="12">
<title>Growth of each figure with the records of its family</title>
<rect width="100%" height="100%" fill="#fff"/>
<text x="16" y="24" font-size="16" font-weight="600">Growth: each figure against the records of its family (both axes logarithmic; slope per 10× records)</text>
${body.join('\n')}
</svg>
`;
}
