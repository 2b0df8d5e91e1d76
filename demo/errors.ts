/** The error display: the service's message for a failed action, next to the control that failed. */
import { ApiError } from './api.js';
import { $ } from './dom.js';

export interface Errors {
  /**
   * Shows an error just below the control that failed (its form, row or list),
   * in the flow of the page so that it covers nothing, or in the header when no
   * control caused it. It has a close button and hides itself after 15 s.
   */
  show(error: unknown, control?: EventTarget | null): void;
  /** Runs an action from a control, showing the service's message next to it on failure. */
  act(action: () => Promise<unknown>): (event?: Event) => void;
}

export function mountErrors(): Errors {
  const box = $('#error');
  const home = box.parentElement!;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const hide = () => {
    clearTimeout(timer);
    box.hidden = true;
  };
  $('#error-close').addEventListener('click', hide);

  function show(error: unknown, control?: EventTarget | null) {
    $('#error-text').textContent =
      error instanceof ApiError ? `${error.status}: ${error.message}` : String((error as Error)?.message ?? error);
    const anchor = control instanceof Element ? control.closest('form, .row, ul, ol') : null;
    if (anchor) anchor.after(box);
    else home.append(box);
    box.hidden = false;
    clearTimeout(timer);
    timer = setTimeout(hide, 15_000);
  }

  const act =
    (action: () => Promise<unknown>) =>
    (event?: Event): void => {
      // Read now: the event's currentTarget is null once its dispatch is over, before the action settles.
      const control = event?.currentTarget;
      void action().catch((error) => show(error, control));
    };

  return { show, act };
}
