/**
 * The machine-learning helpers Pieces OS answers with its models, answered here deterministically
 * from the text alone: technical language split into its code and text segments, secrets found in
 * a text, the code blocks of an HTML page, a format's text rendered as highlight.js HTML.
 */
import { detectSpecific, genericOf, specificOf } from './classify.js';

export interface Segment {
  /** CODE or TEXT. */
  generic: 'CODE' | 'TEXT';
  /** The language of a code segment (a ClassificationSpecificEnum value). */
  specific?: string;
  text: string;
}

/** A fenced block: its opening fence with an optional language, its body, its closing fence. */
const FENCE = /^([ \t]*)(`{3,}|~{3,})[ \t]*([\w+#.-]*)[^\n]*\n([\s\S]*?)^\1?\2[ \t]*$/gm;

/** The lines of a text that look like code (what a paragraph needs to be a code segment). */
const CODE_LINE =
  /^\s*(?:[{}()[\];]+\s*$|(?:import|export|from|const|let|var|function|def|class|return|if|for|while|fn|pub|package|func|#include|using|public|private|static|async|await|SELECT|INSERT|UPDATE|CREATE)\b.*|.*[;{}]\s*$|.*=>.*|\s{2,}\S.*\)\s*:?\s*$)/;

/** Whether a paragraph (no fence) is code: most of its lines look like code, and its text is detected as a language. */
function looksLikeCode(paragraph: string): string | undefined {
  const lines = paragraph.split('\n').filter((line) => line.trim());
  if (lines.length === 0) return undefined;
  const code = lines.filter((line) => CODE_LINE.test(line)).length;
  if (code * 2 < lines.length + (lines.length === 1 ? 1 : 0)) return undefined;
  const specific = detectSpecific(paragraph);
  return genericOf(specific) === 'CODE' ? specific : undefined;
}

/** A segment while the text is split: whether it was a fenced block (never merged with a neighbour). */
type Piece = Segment & { fenced: boolean };

/** Paragraphs of unfenced text as segments: code where they look like code, text otherwise; neighbours of one kind merged. */
function unfenced(text: string, out: Piece[]): void {
  for (const paragraph of text.split(/\n[ \t]*\n/)) {
    if (!paragraph.trim()) continue;
    const specific = looksLikeCode(paragraph);
    const last = out[out.length - 1];
    if (last && last.generic === (specific ? 'CODE' : 'TEXT') && last.specific === specific && !last.fenced) {
      last.text += `\n\n${paragraph}`;
    } else {
      out.push({ generic: specific ? 'CODE' : 'TEXT', ...(specific ? { specific } : {}), text: paragraph, fenced: false });
    }
  }
}

/**
 * A message or text split into its text and code, in order: every fenced block (```ts … ```) is
 * code, in the language its fence names or the one its text is detected as; between them, each
 * paragraph is code when most of its lines look like code and its text is in a programming
 * language, else text. Without `classify`, code segments carry no language.
 */
export function segment(value: string, classify: boolean): Segment[] {
  const out: Piece[] = [];
  let at = 0;
  for (const match of value.matchAll(FENCE)) {
    unfenced(value.slice(at, match.index), out);
    const body = match[4]!.replace(/\n$/, '');
    const named = specificOf(match[3]);
    const specific = named && genericOf(named) !== 'CODE' ? named : (named ?? detectSpecific(body));
    const generic = genericOf(specific) === 'CODE' ? 'CODE' : 'TEXT';
    if (body.trim()) out.push({ generic, ...(generic === 'CODE' ? { specific } : {}), text: body, fenced: true });
    at = match.index + match[0].length;
  }
  unfenced(value.slice(at), out);
  return out.map(({ generic, specific, text }) => ({
    generic,
    ...(classify && specific ? { specific } : {}),
    text,
  }));
}

export interface FoundSecret {
  category: string;
  severity: 'LOW' | 'MODERATE' | 'HIGH';
  name: string;
  description: string;
  /** The secret as it occurs in the text, and where. */
  text: string;
  start: number;
  end: number;
  entropy: number;
}

/** Shannon entropy of a string, in bits per character. */
export function entropy(text: string): number {
  if (!text) return 0;
  const counts = new Map<string, number>();
  for (const char of text) counts.set(char, (counts.get(char) ?? 0) + 1);
  let bits = 0;
  for (const count of counts.values()) {
    const p = count / text.length;
    bits -= p * Math.log2(p);
  }
  return Math.round(bits * 1000) / 1000;
}

/** What a secret looks like: its pattern (the secret is group 1 where there is one), category, severity and name. */
const SECRETS: ReadonlyArray<{ pattern: RegExp; category: string; severity: FoundSecret['severity']; name: string }> = [
  {
    pattern: /-----BEGIN (?:RSA |EC |DSA |OPENSSH |PGP )?PRIVATE KEY(?: BLOCK)?-----[\s\S]*?-----END [A-Z ]*PRIVATE KEY(?: BLOCK)?-----/g,
    category: 'PRIVATE_KEY',
    severity: 'HIGH',
    name: 'Private key',
  },
  { pattern: /\b((?:AKIA|ASIA)[0-9A-Z]{16})\b/g, category: 'ACCESS_KEY', severity: 'HIGH', name: 'AWS access key id' },
  { pattern: /\b(gh[pousr]_[A-Za-z0-9]{36,255})\b/g, category: 'ACCESS_TOKEN', severity: 'HIGH', name: 'GitHub token' },
  { pattern: /\b(github_pat_[A-Za-z0-9_]{22,255})\b/g, category: 'ACCESS_TOKEN', severity: 'HIGH', name: 'GitHub fine-grained token' },
  { pattern: /\b(sk-(?:proj-|ant-)?[A-Za-z0-9_-]{20,})\b/g, category: 'API_KEY', severity: 'HIGH', name: 'API secret key (sk-)' },
  { pattern: /\b(AIza[0-9A-Za-z_-]{35})\b/g, category: 'API_KEY', severity: 'HIGH', name: 'Google API key' },
  { pattern: /\b(xox[abposr]-[A-Za-z0-9-]{10,})\b/g, category: 'API_TOKEN', severity: 'HIGH', name: 'Slack token' },
  {
    pattern: /(https:\/\/hooks\.slack\.com\/services\/[A-Za-z0-9/_-]+)/g,
    category: 'WEB_HOOK_URL',
    severity: 'MODERATE',
    name: 'Slack webhook URL',
  },
  { pattern: /\b((?:sk|rk)_live_[A-Za-z0-9]{16,})\b/g, category: 'SECRET_KEY', severity: 'HIGH', name: 'Stripe live secret key' },
  {
    pattern: /\b(eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,})\b/g,
    category: 'ACCESS_TOKEN',
    severity: 'MODERATE',
    name: 'JSON Web Token',
  },
  {
    pattern: /\b[a-z][a-z0-9+.-]*:\/\/[^\s:@/]+:([^\s:@/]{3,})@[^\s/]+/gi,
    category: 'URL',
    severity: 'MODERATE',
    name: 'Password in a URL',
  },
  {
    pattern: /\b(?:client_?secret|secret_?key|api_?secret)\b["']?\s*[:=]\s*["']([^"'\s]{8,})["']/gi,
    category: 'CLIENT_SECRET',
    severity: 'HIGH',
    name: 'Assigned secret',
  },
  {
    pattern: /\b(?:api_?key|access_?token|auth_?token|password|passwd|secret)\b["']?\s*[:=]\s*["']([^"'\s]{8,})["']/gi,
    category: 'SECRET',
    severity: 'MODERATE',
    name: 'Assigned credential',
  },
];

/**
 * The secrets in a text, in the order they occur, each once (where two patterns find the same
 * place, the first of the table names it): keys and tokens by their known forms, private keys,
 * passwords in URLs, and credentials assigned in code (`apiKey = "…"`).
 */
export function findSecrets(text: string): FoundSecret[] {
  const found: FoundSecret[] = [];
  const taken: Array<[number, number]> = [];
  for (const { pattern, category, severity, name } of SECRETS) {
    for (const match of text.matchAll(pattern)) {
      const secret = match[1] ?? match[0];
      const start = match.index + match[0].indexOf(secret);
      const end = start + secret.length;
      if (taken.some(([s, e]) => start < e && end > s)) continue;
      taken.push([start, end]);
      found.push({
        category,
        severity,
        name,
        description: `${name} (${category}) found at characters ${start} to ${end}.`,
        text: secret,
        start,
        end,
        entropy: entropy(secret),
      });
    }
  }
  return found.sort((a, b) => a.start - b.start);
}

const ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", nbsp: ' ' };

/** An HTML fragment's text: tags removed, entities decoded. */
function htmlText(html: string): string {
  return html
    .replace(/<br\s*\/?>/gi, '\n')
    .replace(/<[^>]*>/g, '')
    .replace(/&(#x[0-9a-f]+|#\d+|\w+);/gi, (whole, entity: string) => {
      if (entity[0] === '#') {
        const code = entity[1] === 'x' || entity[1] === 'X' ? Number.parseInt(entity.slice(2), 16) : Number.parseInt(entity.slice(1), 10);
        return Number.isFinite(code) && code > 0 && code <= 0x10ffff ? String.fromCodePoint(code) : whole;
      }
      return ENTITIES[entity.toLowerCase()] ?? whole;
    });
}

export interface PageCode {
  text: string;
  /** The language the block's class names (`language-ts`, `lang-py`, `hljs python`), if it names one. */
  specific?: string;
}

/**
 * The code blocks of an HTML page, in order: each `<pre>` (with or without a `<code>` inside),
 * and each `<code>` outside a `<pre>` that holds more than one line; their text without tags and
 * entities, empty ones and repeats left out.
 */
export function pageCode(html: string): PageCode[] {
  const blocks: PageCode[] = [];
  const seen = new Set<string>();
  const add = (attributes: string, inner: string) => {
    const text = htmlText(inner).replace(/^\n+|\s+$/g, '');
    if (!text.trim() || seen.has(text)) return;
    seen.add(text);
    const classes = /class\s*=\s*["']([^"']*)["']/i.exec(attributes)?.[1] ?? '';
    const named = classes
      .split(/\s+/)
      .map((name) => name.replace(/^(?:language-|lang-)/, ''))
      .map(specificOf)
      .find((specific) => specific !== undefined);
    blocks.push({ text, ...(named ? { specific: named } : {}) });
  };
  const withoutPre = html.replace(/<pre\b([^>]*)>([\s\S]*?)<\/pre>/gi, (_whole, attributes: string, inner: string) => {
    const code = /^\s*<code\b([^>]*)>([\s\S]*?)<\/code>\s*$/i.exec(inner);
    add(`${attributes} ${code?.[1] ?? ''}`, code ? code[2]! : inner);
    return '';
  });
  for (const match of withoutPre.matchAll(/<code\b([^>]*)>([\s\S]*?)<\/code>/gi)) {
    if (htmlText(match[2]!).trim().includes('\n')) add(match[1]!, match[2]!);
  }
  return blocks;
}

const escapeHtml = (text: string) => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

/** A text as highlight.js HTML: its block with the `hljs language-…` classes, the text escaped (no token spans: no highlighter runs here). */
export function hljsHtml(text: string, specific: string): string {
  return `<pre><code class="hljs language-${escapeHtml(specific)}">${escapeHtml(text)}</code></pre>`;
}
