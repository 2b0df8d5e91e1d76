/** Tiny DOM helpers. Text is always set with textContent, never parsed as HTML. */
export const $ = <T extends HTMLElement = HTMLElement>(selector: string) => {
  const element = document.querySelector<T>(selector);
  if (!element) throw new Error(`Missing element ${selector}`);
  return element;
};

type Child = Node | string | null | undefined | false;

export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  props: { [attribute: string]: string | Record<string, string> | undefined; dataset?: Record<string, string> } = {},
  ...children: Child[]
): HTMLElementTagNameMap[K] {
  const element = document.createElement(tag);
  const { dataset, ...attributes } = props;
  for (const [name, value] of Object.entries(attributes)) if (typeof value === 'string') element.setAttribute(name, value);
  if (dataset) Object.assign(element.dataset, dataset);
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    element.append(typeof child === 'string' ? document.createTextNode(child) : child);
  }
  return element;
}

export const formatBytes = (bytes: number) =>
  bytes < 1024 ? `${bytes} B` : bytes < 1024 * 1024 ? `${(bytes / 1024).toFixed(1)} KB` : `${(bytes / 1024 / 1024).toFixed(2)} MB`;

/** "1 interaction", "2 interactions". */
export const plural = (count: number, one: string, many = `${one}s`) => `${count} ${count === 1 ? one : many}`;

/** A timestamp's local time, or a dash when there is none. */
export const when = (timestamp?: { value: string }) => (timestamp ? new Date(timestamp.value).toLocaleTimeString() : '—');
