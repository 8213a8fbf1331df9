import Mustache from 'mustache';
import { badRequest } from '../core/errors';

// Mustache templates in prompt messages. Output goes to a model, not a browser, so nothing is HTML
// escaped. The variables a template needs are read from Mustache's own parse tree.

type Token = [string, string, number, number, Token[]?, ...unknown[]];

/** Names a template uses: `required` are interpolated outside any section; `all` adds section names. */
export function templateVariables(template: string): { required: string[]; all: string[] } {
  let tokens: Token[];
  try {
    tokens = Mustache.parse(template) as unknown as Token[];
  } catch (error) {
    throw badRequest(`The template is not valid Mustache: ${(error as Error).message}`, 'messages');
  }
  const required = new Set<string>();
  const all = new Set<string>();
  for (const [type, value] of tokens) {
    // `name` is {{x}}, `&` is {{& x}} or {{{x}}}; `#` and `^` open sections, which may be absent.
    if (type === 'name' || type === '&') {
      if (value !== '.') required.add(value);
      all.add(value);
    } else if (type === '#' || type === '^') {
      all.add(value);
    }
  }
  return { required: [...required], all: [...all] };
}

/** Every string inside a message's content, where templates may live (text parts, image URLs). */
function strings(value: unknown, visit: (s: string) => void): void {
  if (typeof value === 'string') visit(value);
  else if (Array.isArray(value)) for (const v of value) strings(v, visit);
  else if (value && typeof value === 'object') for (const v of Object.values(value)) strings(v, visit);
}

export function messagesVariables(messages: unknown[]): { required: string[]; all: string[] } {
  const required = new Set<string>();
  const all = new Set<string>();
  for (const m of messages) {
    strings((m as { content?: unknown }).content, (s) => {
      const found = templateVariables(s);
      for (const v of found.required) required.add(v);
      for (const v of found.all) all.add(v);
    });
  }
  return { required: [...required], all: [...all] };
}

function lookup(view: Record<string, unknown>, name: string): unknown {
  let at: unknown = view;
  for (const part of name.split('.')) {
    if (!at || typeof at !== 'object') return undefined;
    at = (at as Record<string, unknown>)[part];
  }
  return at;
}

function renderValue(value: unknown, view: Record<string, unknown>): unknown {
  if (typeof value === 'string') return Mustache.render(value, view, {}, { escape: (text: string) => text });
  if (Array.isArray(value)) return value.map((v) => renderValue(v, view));
  if (value && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, renderValue(v, view)]));
  }
  return value;
}

/** Renders the messages' content with `variables`; a variable the template needs and lacks is a 400. */
export function renderMessages(messages: unknown[], variables: Record<string, unknown>): unknown[] {
  const missing = messagesVariables(messages).required.filter(
    (name) => lookup(variables, name) === undefined,
  );
  if (missing.length > 0) {
    throw badRequest(
      `Missing variable${missing.length > 1 ? 's' : ''} for the prompt template: ${missing.join(', ')}.`,
      `variables.${missing[0]}`,
      'missing_variable',
    );
  }
  return messages.map((m) => {
    const message = m as Record<string, unknown>;
    return { ...message, content: renderValue(message.content, variables) };
  });
}
