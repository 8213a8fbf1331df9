// Small pieces every management page shares: loading a list, a form's error at the field the API names,
// a confirmation dialog, a copy button and an empty state.
import type { ComponentChildren } from 'preact';
import { useCallback, useEffect, useLayoutEffect, useRef, useState } from 'preact/hooks';
import { ApiError } from './api';

export interface Loaded<T> {
  data: T | null;
  error: string | null;
  reload: () => void;
}

/** Runs `load` now and whenever `deps` change or `reload()` is called; a refusal keeps the API's message. */
export function useLoad<T>(load: () => Promise<T>, deps: unknown[]): Loaded<T> {
  const [data, setData] = useState<T | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [tick, setTick] = useState(0);
  useEffect(() => {
    let cancelled = false;
    setError(null);
    load().then(
      (value) => !cancelled && setData(value),
      (e: unknown) => {
        if (cancelled) return;
        setData(null);
        setError(errorText(e));
      },
    );
    return () => {
      cancelled = true;
    };
  }, [...deps, tick]);
  return { data, error, reload: useCallback(() => setTick((t) => t + 1), []) };
}

export function errorText(e: unknown): string {
  if (e instanceof ApiError && e.status > 0) return `${e.status}: ${e.message}`;
  return e instanceof Error ? e.message : String(e);
}

/** The API's message for the field it named (`param`, or a path under it such as `config.targets[0]`). */
export function fieldError(error: unknown, name: string): string | null {
  if (!(error instanceof ApiError) || !error.param) return null;
  const p = error.param;
  return p === name || p.startsWith(`${name}.`) || p.startsWith(`${name}[`) ? error.message : null;
}

/** The error of a form that no field of `fields` shows; null when one does. */
export function FormError({ error, fields = [] }: { error: unknown; fields?: string[] }) {
  if (!error || fields.some((f) => fieldError(error, f))) return null;
  return (
    <p class="error" role="alert">
      {errorText(error)}
    </p>
  );
}

export function FieldError({ error, name }: { error: unknown; name: string }) {
  const message = fieldError(error, name);
  return message ? (
    <span class="field-error" role="alert" data-field-error={name}>
      {message}
    </span>
  ) : null;
}

export function Alert({ text }: { text: string | null }) {
  return text ? (
    <p class="error" role="alert">
      {text}
    </p>
  ) : null;
}

export function Empty({ children }: { children: ComponentChildren }) {
  return <div class="empty card">{children}</div>;
}

/** A list page's rows: the load error, what to do first once an empty list is loaded, else the table. */
export function ListTable<T>(props: {
  error?: string | null;
  loaded: boolean;
  rows: T[];
  empty: ComponentChildren;
  head: ComponentChildren;
  /** Whether rows end in a cell of buttons: its header is named for screen readers only. */
  actions?: boolean;
  row: (item: T) => ComponentChildren;
}) {
  const { error = null, loaded, rows, empty, head, actions = false, row } = props;
  return (
    <>
      <Alert text={error} />
      {loaded && rows.length === 0 && <Empty>{empty}</Empty>}
      {rows.length > 0 && (
        <div class="card table-wrap">
          <table>
            <thead>
              <tr>
                {head}
                {actions && (
                  <th>
                    <span class="sr-only">Actions</span>
                  </th>
                )}
              </tr>
            </thead>
            <tbody>{rows.map(row)}</tbody>
          </table>
        </div>
      )}
    </>
  );
}

/** Copies `text`; says so in the button for a moment. */
export function CopyButton({ text, label = 'Copy' }: { text: string; label?: string }) {
  const [done, setDone] = useState(false);
  return (
    <button
      type="button"
      class="secondary"
      onClick={async () => {
        try {
          await navigator.clipboard.writeText(text);
          setDone(true);
          setTimeout(() => setDone(false), 1500);
        } catch {
          // Clipboard refused (an insecure origin): the text stays selectable beside the button.
          setDone(false);
        }
      }}
    >
      {done ? 'Copied' : label}
    </button>
  );
}

interface Pending {
  message: string;
  confirmLabel: string;
  action: () => Promise<unknown>;
}

/**
 * A modal `<dialog>` that asks before a destructive action, then runs it and shows the API's refusal
 * in the dialog. Returns the element to render and `ask`.
 */
export function useConfirm(): [
  ComponentChildren,
  (message: string, confirmLabel: string, action: () => Promise<unknown>) => void,
] {
  const ref = useRef<HTMLDialogElement>(null);
  const [pending, setPending] = useState<Pending | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  useEffect(() => {
    const dialog = ref.current;
    if (pending && dialog && !dialog.open) dialog.showModal();
  }, [pending]);

  const close = () => {
    ref.current?.close();
    setPending(null);
    setError(null);
  };
  const element = (
    <dialog ref={ref} class="confirm" onClose={() => setPending(null)} aria-labelledby="confirm-message">
      {pending && (
        <form
          method="dialog"
          onSubmit={async (e) => {
            e.preventDefault();
            setBusy(true);
            setError(null);
            try {
              await pending.action();
              close();
            } catch (failure) {
              setError(errorText(failure));
            } finally {
              setBusy(false);
            }
          }}
        >
          <p id="confirm-message">{pending.message}</p>
          <Alert text={error} />
          <div class="actions">
            <button type="button" class="secondary" onClick={close}>
              Cancel
            </button>
            <button type="submit" class="danger" disabled={busy}>
              {pending.confirmLabel}
            </button>
          </div>
        </form>
      )}
    </dialog>
  );
  return [element, (message, confirmLabel, action) => setPending({ message, confirmLabel, action })];
}

/** A submit handler that keeps the error (with its `param`) and a busy flag. */
export function useSubmit(run: () => Promise<unknown>): {
  error: unknown;
  busy: boolean;
  submit: (e: Event) => Promise<void>;
  setError: (e: unknown) => void;
} {
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const submit = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setError(null);
    try {
      await run();
    } catch (failure) {
      setError(failure);
    } finally {
      setBusy(false);
    }
  };
  return { error, busy, submit, setError };
}

/** Parses a JSON text field; a syntax error becomes an ApiError-shaped error at that field. */
export function parseJsonField(text: string, param: string): unknown {
  try {
    return JSON.parse(text);
  } catch (e) {
    throw new ApiError(0, `${param} is not valid JSON: ${(e as Error).message}`, param);
  }
}

export function formatDate(iso: string | null | undefined): string {
  if (!iso) return '—';
  const d = new Date(iso);
  return Number.isNaN(d.getTime())
    ? iso
    : d.toLocaleString('en-GB', { dateStyle: 'medium', timeStyle: 'short' });
}

/**
 * A ref whose element takes the focus when it mounts: a panel opened from a row is where the keyboard goes.
 * A layout effect, so the focus moves in the same task that puts the panel in the page: nothing typed (or
 * checked) between the panel's paint and a later effect lands elsewhere.
 */
export function useFocusOnMount<T extends HTMLElement>() {
  const ref = useRef<T>(null);
  useLayoutEffect(() => ref.current?.focus(), []);
  return ref;
}

/** A destructive button in a table row: it asks through `confirm` (from `useConfirm`) before `action` runs. */
export function DangerButton({
  confirm,
  message,
  confirmLabel,
  action,
  children,
}: {
  confirm: (message: string, confirmLabel: string, action: () => Promise<unknown>) => void;
  message: string;
  confirmLabel: string;
  action: () => Promise<unknown>;
  children: ComponentChildren;
}) {
  return (
    <button type="button" class="danger small" onClick={() => confirm(message, confirmLabel, action)}>
      {children}
    </button>
  );
}
