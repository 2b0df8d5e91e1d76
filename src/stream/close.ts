/** What a browser's `WebSocket.close(code, reason)` refuses, refused the same way by every served socket. */
export function checkClose(code?: number, reason?: string): void {
  if (code !== undefined && code !== 1000 && !(code >= 3000 && code <= 4999)) {
    throw new DOMException(
      `Failed to execute 'close' on 'WebSocket': The close code must be either 1000, or between 3000 and 4999. ${code} is neither.`,
      'InvalidAccessError',
    );
  }
  if (reason !== undefined && new TextEncoder().encode(reason).byteLength > 123) {
    throw new DOMException("Failed to execute 'close' on 'WebSocket': The message must not be greater than 123 bytes.", 'SyntaxError');
  }
}
