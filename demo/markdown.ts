/**
 * Markdown as the copilot writes it (paragraphs, emphasis, lists, code fences),
 * rendered by micromark (CommonMark) with its safe defaults: HTML in the text
 * is shown as text, never inserted, and a link or image whose URL has a
 * dangerous protocol (javascript:, vbscript:, data:…) loses it. The one place
 * the demo sets HTML, and only micromark's output.
 */
import { micromark } from 'micromark';

/** Replaces the element's content with `text` rendered as Markdown. */
export function showMarkdown(element: HTMLElement, text: string): void {
  element.innerHTML = micromark(text, { allowDangerousHtml: false, allowDangerousProtocol: false }).trim();
  // A link opens in a new tab: following it in place would leave the demo.
  for (const link of element.querySelectorAll('a')) {
    link.target = '_blank';
    link.rel = 'noopener noreferrer';
  }
}
