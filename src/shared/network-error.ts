/** The error a failed request rejects with, as `fetch`'s does. */
export const networkError = (message: string) => new TypeError(`Failed to fetch: ${message}`);
