/** The constant bodies the floor and MSW answer with: read from the page URL's hash (JSON). */
export type Bodies = Record<string, string>;

export function bodies(): Bodies {
  return JSON.parse(decodeURIComponent(location.hash.slice(1)) || '{}') as Bodies;
}

export function ready() {
  document.querySelector('#status')!.textContent = 'ready';
}

export async function controlled() {
  if (navigator.serviceWorker.controller) return;
  await new Promise((resolve) => navigator.serviceWorker.addEventListener('controllerchange', resolve, { once: true }));
}
