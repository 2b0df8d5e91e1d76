/** The benchmark's asset corpus (assets.bench.ts, relevance.bench.ts). */
export interface Snippet {
  name: string;
  text: string;
  query: string;
  question?: string;
}

/**
 * Snippets of about 1 KB: code-like lines of words from a vocabulary of 2,000, Zipf-distributed,
 * seeded; each with a two-word search query and, when asked, a copilot question of three words.
 */
export function snippets(count: number, seed: number, { questions = false } = {}): Snippet[] {
  let state = seed;
  const random = () => (state = (state * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31;
  const syllables =
    'ba be bi bo bu ca ce ci co cu da de di do du fa fe fi fo fu ga ge gi go gu ka ke ki ko ku la le li lo lu ma me mi mo mu na ne ni no nu pa pe pi po pu ra re ri ro ru sa se si so su ta te ti to tu'.split(
      ' ',
    );
  const vocabulary = Array.from(
    { length: 2000 },
    (_, i) => syllables[i % 60]! + syllables[Math.floor(i / 60) % 60]! + (i >= 3600 ? syllables[i % 7]! : ''),
  );
  // Zipf: word k is picked with a weight of 1/(k+1).
  const weights = vocabulary.map((_, k) => 1 / (k + 1));
  const total = weights.reduce((a, b) => a + b, 0);
  const cumulative: number[] = [];
  weights.reduce((sum, w, k) => (cumulative[k] = sum + w / total), 0);
  const word = () => {
    const r = random();
    let low = 0;
    let high = cumulative.length - 1;
    while (low < high) {
      const mid = (low + high) >> 1;
      if (cumulative[mid]! < r) low = mid + 1;
      else high = mid;
    }
    return vocabulary[low]!;
  };
  const extensions = ['ts', 'py', 'go', 'rs', 'js', 'java'];
  return Array.from({ length: count }, (_, i) => {
    const lines = Array.from(
      { length: 14 },
      () => `function ${word()}${word()[0]!.toUpperCase()}${word().slice(1)}(${word()}) { return ${word()}(${word()}, ${word()}); }`,
    );
    const snippet = {
      name: `${word()}_${word()}_${i}.${extensions[i % extensions.length]}`,
      text: lines.join('\n'),
      query: `${word()} ${word()}`,
    };
    return questions ? { ...snippet, question: `how do I ${word()} the ${word()} with ${word()}` } : snippet;
  });
}
