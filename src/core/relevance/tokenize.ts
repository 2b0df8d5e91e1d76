/** Text into search terms: words, identifiers split at their boundaries, stop words dropped, plurals folded. */

const STOP_WORDS = new Set(
  (
    'a an and are as at be but by can could did do does for from had has have how i if in into is it its ' +
    'me my of on or our should so than that the their them then there these this those to was we were what ' +
    'when where which who why will with would you your about please explain tell show'
  ).split(' '),
);

/** Text of ASCII characters only (most code): split by cheaper expressions than the Unicode classes. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: the range is every ASCII character, NUL to DEL.
const ASCII = /^[\x00-\x7f]*$/;

/** Spelled-out names for common language extensions, so "python" finds `.py` assets. */
const LANGUAGE_NAMES: Record<string, string> = {
  ts: 'typescript',
  tsx: 'typescript',
  js: 'javascript',
  jsx: 'javascript',
  mjs: 'javascript',
  cjs: 'javascript',
  py: 'python',
  rb: 'ruby',
  rs: 'rust',
  go: 'go',
  java: 'java',
  kt: 'kotlin',
  cs: 'csharp',
  cpp: 'cpp',
  cc: 'cpp',
  c: 'c',
  h: 'c',
  hpp: 'cpp',
  swift: 'swift',
  php: 'php',
  sh: 'shell',
  bash: 'shell',
  zsh: 'shell',
  sql: 'sql',
  md: 'markdown',
  html: 'html',
  css: 'css',
  scss: 'css',
  json: 'json',
  yaml: 'yaml',
  yml: 'yaml',
  toml: 'toml',
  dart: 'dart',
  lua: 'lua',
  r: 'r',
  scala: 'scala',
  txt: 'text',
};

/** Folds plural forms onto one term ("retries" → "retry", "timers" → "timer"). */
function stem(word: string): string {
  if (word.length <= 3 || /\d/.test(word)) return word;
  if (word.endsWith('ies') && word.length > 4) return `${word.slice(0, -3)}y`;
  if (word.endsWith('sses')) return word.slice(0, -2);
  if (/(?:xes|ches|shes)$/.test(word)) return word.slice(0, -2);
  if (word.endsWith('s') && !/(?:ss|us|is)$/.test(word)) return word.slice(0, -1);
  return word;
}

/** The terms of one word; computed once per distinct word (words repeat across a store). */
const wordTerms = new Map<string, readonly string[]>();
const WORD_CACHE_LIMIT = 100_000;

function termsOf(word: string): readonly string[] {
  let terms = wordTerms.get(word);
  if (terms) return terms;
  const ascii = ASCII.test(word);
  if (!(ascii ? /[A-Z_]/ : /[\p{Lu}_]/u).test(word)) {
    terms = STOP_WORDS.has(word) ? [] : [stem(word)];
  } else {
    const parts = word
      .replace(ascii ? /([a-z0-9])([A-Z])/g : /([\p{Ll}\p{N}])(\p{Lu})/gu, '$1 $2')
      .replace(ascii ? /([A-Z])([A-Z][a-z]{2,})/g : /(\p{Lu})(\p{Lu}\p{Ll}{2,})/gu, '$1 $2')
      .split(/[\s_]+/)
      .filter(Boolean)
      .map((part) => part.toLowerCase());
    const whole = parts.join('');
    terms = [
      ...(parts.length > 1 && !STOP_WORDS.has(whole) ? [stem(whole)] : []),
      ...parts.filter((part) => !STOP_WORDS.has(part)).map(stem),
    ];
  }
  if (wordTerms.size >= WORD_CACHE_LIMIT) wordTerms.clear();
  wordTerms.set(word, terms);
  return terms;
}

/**
 * Terms of a text: words lower-cased, identifiers split at camelCase,
 * snake_case and kebab-case boundaries (keeping the whole identifier too),
 * stop words dropped, plurals folded.
 */
export function tokenize(text: string): string[] {
  // ASCII text (most code) is split by a cheaper expression than the Unicode classes.
  const words = ASCII.test(text) ? /[A-Za-z0-9_]+/g : /[\p{L}\p{N}_]+/gu;
  const terms: string[] = [];
  for (let match = words.exec(text); match; match = words.exec(text)) {
    for (const term of termsOf(match[0])) terms.push(term);
  }
  return terms;
}

export function languageText(language: string): string {
  const key = language.toLowerCase();
  const name = LANGUAGE_NAMES[key];
  return name && name !== key ? `${key} ${name}` : key;
}
