/**
 * The deterministic summary that opens a conversation created from an asset:
 * name, language, size, top-level declarations and an excerpt. No model needed.
 */
/** What a summary reads of an asset. */
export interface SummaryInput {
  name: string;
  /** The specific classification (a file extension). */
  language: string;
  text: string;
  description?: string;
}

export const LANGUAGES: Record<string, string> = {
  ts: 'TypeScript',
  tsx: 'TypeScript (TSX)',
  js: 'JavaScript',
  jsx: 'JavaScript (JSX)',
  mjs: 'JavaScript',
  py: 'Python',
  go: 'Go',
  rs: 'Rust',
  java: 'Java',
  kt: 'Kotlin',
  cs: 'C#',
  c: 'C',
  h: 'C header',
  cpp: 'C++',
  hpp: 'C++ header',
  rb: 'Ruby',
  php: 'PHP',
  swift: 'Swift',
  dart: 'Dart',
  sh: 'Shell',
  bash: 'Shell',
  sql: 'SQL',
  html: 'HTML',
  css: 'CSS',
  scss: 'SCSS',
  json: 'JSON',
  yaml: 'YAML',
  yml: 'YAML',
  md: 'Markdown',
  txt: 'Plain text',
};

/** Top-level declaration patterns per language family; group 1 is the kind, group 2 the name. */
const DECLARATIONS: Array<[string[], RegExp]> = [
  [
    ['ts', 'tsx', 'js', 'jsx', 'mjs'],
    /^(?:export\s+(?:default\s+)?)?(?:declare\s+)?(?:async\s+)?(function\*?|class|interface|type|enum|const|let|var)\s+([A-Za-z_$][\w$]*)/,
  ],
  [['py'], /^(?:async\s+)?(def|class)\s+([A-Za-z_]\w*)/],
  [['go'], /^(func|type|var|const)\s+(?:\([^)]*\)\s*)?([A-Za-z_]\w*)/],
  [['rs'], /^(?:pub(?:\([^)]*\))?\s+)?(?:async\s+)?(fn|struct|enum|trait|mod|type|const|static|impl)\s+([A-Za-z_]\w*)/],
  [
    ['java', 'kt', 'cs', 'swift', 'dart'],
    /^(?:(?:public|private|protected|internal|abstract|final|sealed|static|open|data)\s+)*(class|interface|enum|record|struct|object|fun|func|protocol)\s+([A-Za-z_]\w*)/,
  ],
  [['rb'], /^(def|class|module)\s+([A-Za-z_][\w.?!]*)/],
  [['php'], /^(?:(?:abstract|final)\s+)?(function|class|interface|trait)\s+([A-Za-z_]\w*)/],
  [['sh', 'bash'], /^(?:(function)\s+)?([A-Za-z_][\w-]*)\s*\(\)\s*\{?/],
  [['c', 'h', 'cpp', 'hpp'], /^(?:(struct|class|enum|union)\s+([A-Za-z_]\w*)\s*\{|[A-Za-z_][\w\s*&:<>,]*?\b([A-Za-z_]\w*)\s*\([^;]*$)/],
];

export function languageName(extension: string): string {
  return LANGUAGES[extension.toLowerCase()] ?? extension.toUpperCase();
}

export function topLevelDeclarations(text: string, extension: string): string[] {
  const pattern = DECLARATIONS.find(([extensions]) => extensions.includes(extension.toLowerCase()))?.[1];
  if (!pattern) return [];
  const found: string[] = [];
  for (const line of text.split('\n')) {
    const match = pattern.exec(line);
    if (!match) continue;
    const [kind, name] = match[3] ? ['function', match[3]] : [match[1] ?? 'function', match[2]];
    if (name) found.push(`${kind} ${name}`);
  }
  return found;
}

const EXCERPT_LINES = 12;
const MAX_DECLARATIONS = 20;

export function summarizeAsset(asset: SummaryInput): string {
  const lines = asset.text.replace(/\n$/, '').split('\n');
  const bytes = new TextEncoder().encode(asset.text).byteLength;
  const declarations = topLevelDeclarations(asset.text, asset.language);
  const shown = declarations.slice(0, MAX_DECLARATIONS);
  const more = declarations.length - shown.length;
  const excerpt = lines.slice(0, EXCERPT_LINES).join('\n');
  return [
    `Asset: ${asset.name}`,
    `Language: ${languageName(asset.language)}`,
    `Size: ${lines.length} line${lines.length === 1 ? '' : 's'}, ${bytes} bytes`,
    `Top-level declarations: ${shown.length ? shown.join(', ') + (more > 0 ? ` and ${more} more` : '') : 'none found'}`,
    ...(asset.description ? [`Description: ${asset.description}`] : []),
    `Excerpt:`,
    `\`\`\`${asset.language}`,
    excerpt + (lines.length > EXCERPT_LINES ? '\n…' : ''),
    '```',
  ].join('\n');
}
