/**
 * Classification of a format's value: the specific type (a file extension of
 * ClassificationSpecificEnum) from what the client says (the seed's classification,
 * its metadata's `ext`, a file or asset name), else detected from the text; the
 * generic kind (CODE, TEXT, IMAGE…) from the specific type.
 */
import { ClassificationSpecificEnum } from '../enums.js';

const SPECIFIC = new Set<string>(ClassificationSpecificEnum);

/** Spellings clients use that are not values of ClassificationSpecificEnum. */
const ALIASES: Record<string, string> = {
  typescript: 'ts',
  javascript: 'js',
  python: 'py',
  rust: 'rs',
  golang: 'go',
  ruby: 'rb',
  kotlin: 'kt',
  csharp: 'cs',
  'c#': 'cs',
  'c++': 'cpp',
  shell: 'sh',
  yml: 'yml',
  markdown: 'md',
  plaintext: 'txt',
  cjs: 'js',
};

/** A specific classification for a name or extension (`debounce.ts`, `.TS`, `TypeScript`), if it names one. */
export function specificOf(nameOrExtension: string | undefined): string | undefined {
  if (!nameOrExtension) return undefined;
  const raw = nameOrExtension.trim();
  const extension = /\.([A-Za-z0-9+#_-]+)$/.exec(raw)?.[1] ?? raw.replace(/^\./, '');
  for (const candidate of [extension, extension.toLowerCase()]) {
    if (SPECIFIC.has(candidate) && candidate !== 'UNKNOWN') return candidate;
    // Own keys only: a name such as `__proto__` or `constructor` names no language.
    const alias = Object.hasOwn(ALIASES, candidate.toLowerCase()) ? ALIASES[candidate.toLowerCase()] : undefined;
    if (alias) return alias;
  }
  return undefined;
}

const TEXT = new Set(['txt', 'text', 'md', 'mdown', 'mdwn', 'markdown', 'markdn', 'log', 'csv', 'rtf', 'rtx', 'doc', 'docx', 'pdf']);
const IMAGE = new Set(['png', 'jpg', 'jpeg', 'jpe', 'gif', 'bmp', 'ico', 'webp', 'tif', 'tiff', 'svgz']);
const VIDEO = new Set(['mp4', 'webm', 'ogv', 'qt', 'jpgv']);

/** The generic kind of a specific classification. */
export function genericOf(specific: string): 'CODE' | 'TEXT' | 'IMAGE' | 'VIDEO' {
  if (IMAGE.has(specific)) return 'IMAGE';
  if (VIDEO.has(specific)) return 'VIDEO';
  if (TEXT.has(specific)) return 'TEXT';
  return 'CODE';
}

/** Patterns that say which language a text is in, tried in order; the first that matches wins. */
const SIGNS: Array<[string, RegExp]> = [
  ['php', /^\s*<\?php/],
  ['xml', /^\s*<\?xml/],
  ['html', /^\s*(?:<!doctype html|<html[\s>])/i],
  ['py', /^#!.*\bpython/],
  ['sh', /^#!.*\b(?:ba|z)?sh\b/],
  ['js', /^#!.*\bnode\b/],
  ['go', /^\s*package\s+\w+\s*$[\s\S]*\bfunc\s/m],
  [
    'rs',
    /\bfn\s+\w+\s*(?:<[^>]*>)?\s*\([^)]*\)\s*(?:->\s*[^{]+)?\{|\blet\s+mut\s|\bimpl(?:<[^>]*>)?\s+\w+|\bpub\s+(?:fn|struct|enum|mod)\s/,
  ],
  ['swift', /^\s*import\s+(?:Foundation|SwiftUI|UIKit)\s*$/m],
  ['dart', /^\s*import\s+'package:|\bvoid\s+main\(\)\s*\{/m],
  ['kt', /\bfun\s+\w+\s*\([^)]*\)\s*(?::\s*\w+\s*)?[{=]|^\s*val\s+\w+\s*[:=]/m],
  ['java', /\bpublic\s+(?:final\s+)?class\s+\w+|\bSystem\.out\.println\(|\bpublic\s+static\s+void\s+main\s*\(/],
  ['cs', /^\s*using\s+System[\w.]*;|\bnamespace\s+[\w.]+\s*[{;]|\bConsole\.WriteLine\(/m],
  ['cpp', /^\s*#include\s*<(?:iostream|vector|string|map|memory)>|\bstd::\w+/m],
  ['c', /^\s*#include\s*[<"][\w./]+\.h[>"]/m],
  [
    'py',
    /^\s*(?:async\s+)?def\s+\w+\s*\([^)]*\)\s*(?:->\s*[^:]+)?:\s*$|^\s*class\s+\w+(?:\([^)]*\))?:\s*$|^\s*from\s+[\w.]+\s+import\s+\w|^\s*import\s+\w+(?:\s+as\s+\w+)?\s*$|^\s*if\s+__name__\s*==/m,
  ],
  ['rb', /^\s*def\s+\w+[?!]?\s*$[\s\S]*^\s*end\s*$|^\s*require\s+'[\w/]+'\s*$|\bputs\s+["']/m],
  [
    'ts',
    /^\s*(?:export\s+)?(?:interface|type|enum)\s+\w+(?:<[^>]*>)?\s*[={]|:\s*(?:string|number|boolean|void|unknown|Promise<[^>]*>)\s*[,;)={]|\bas\s+const\b/m,
  ],
  [
    'js',
    /^\s*(?:import\s+[\w{*][^;]*\s+from\s+['"]|export\s+(?:default\s+)?(?:function|const|class)\b|const\s+\w+\s*=\s*(?:require\(|\(?[^)]*\)?\s*=>))|\bconsole\.log\(|\bfunction\s*\w*\s*\([^)]*\)\s*\{|\bdocument\.\w+/m,
  ],
  ['sql', /^\s*(?:select\s[\s\S]+\sfrom\s|insert\s+into\s|create\s+(?:table|index|view)\s|update\s+\w+\s+set\s|delete\s+from\s)/im],
  // Each part of a selector follows a combinator or whitespace, or begins with `.`, `#` or `:`: a line of plain words
  // splits one way only (with both optional, a sentence of a dozen words took the matcher minutes).
  ['css', /^\s*[.#]?[\w-]+(?:(?:\s*[,>+~]\s*|\s+)[.#:]?[\w-]+|[.#:][\w-]+)*\s*\{\s*[\w-]+\s*:[^;{}]+;/m],
  ['sh', /^\s*(?:echo\s|export\s+\w+=|if\s+\[\[?\s|fi\s*$|sudo\s|apt(?:-get)?\s+install\s|npm\s+(?:install|run)\s|cd\s+[\w./~-]+\s*$)/m],
  ['md', /^#{1,6}\s+\S|^\s*[-*]\s+\[[ x]\]\s|^```/m],
  ['yaml', /^(?:---\s*\n)?(?:[\w-]+:\s*(?:[^\n{}]*)\n){2,}/],
];

/** The specific classification of a text, detected from its content; `txt` when nothing says otherwise. */
export function detectSpecific(text: string): string {
  const head = text.slice(0, 64 * 1024);
  const trimmed = head.trim();
  if ((trimmed.startsWith('{') && trimmed.endsWith('}')) || (trimmed.startsWith('[') && trimmed.endsWith(']'))) {
    try {
      if (trimmed.length === text.trim().length) {
        JSON.parse(trimmed);
        return 'json';
      }
    } catch {
      // not JSON: look further
    }
  }
  for (const [specific, pattern] of SIGNS) if (pattern.test(head)) return specific;
  return 'txt';
}
