// Parsed DynamoDB expressions, kept per shape for the embedded DynamoDB (dynalite). Its PEG parsers were a
// fifth of its thread's time for the gateway's calls, which are a few dozen shapes sent over and over with
// other names and values (a reservation's attribute is named after its request). Plain JavaScript: it runs
// in the worker thread.
//
// A shape is the expression, which names resolve to the same attribute, and the type of each value: the
// parsers' checks look at nothing else, except BETWEEN bounds and attribute_type's type name, which are
// never cached. The first call of a shape is parsed as always (its errors are dynalite's own) and parsed
// again with stand-ins for the names and values; later calls copy that tree with their own.

const MAX_SHAPES = 2000;
const VALUE_TYPES = ['S', 'N', 'B', 'NULL', 'BOOL', 'SS', 'NS', 'BS', 'L', 'M'];
// Checks that read a value, not only its type.
const READS_VALUES = /between|attribute_type/i;

const typeOf = (value) => VALUE_TYPES.find((t) => value?.[t] != null) ?? '?';

/** The stand-in of the n-th distinct attribute name: no real name starts with NUL. */
const nameStandIn = (n) => `\u0000${n}\u0000`;

/** The distinct attribute names in the order their placeholders are declared; one stand-in each. */
function nameClasses(attrNames) {
  const classes = new Map();
  for (const key in attrNames) if (!classes.has(attrNames[key])) classes.set(attrNames[key], classes.size);
  return classes;
}

function shapeOf(expression, context) {
  const classes = nameClasses(context.attrNames);
  let shape = `${context.isKeyCondition ? 'K' : 'E'}${expression}\u0001`;
  for (const key in context.attrNames) shape += `${key}=${classes.get(context.attrNames[key])},`;
  shape += '\u0001';
  for (const key in context.attrVals) shape += `${key}=${typeOf(context.attrVals[key])},`;
  return shape;
}

const removedKeys = (before, after) => Object.keys(before ?? {}).filter((k) => !(k in (after ?? {})));

/** A copy of a parsed tree with the stand-ins replaced: names in strings and keys, values by identity. */
function instantiate(node, names, values) {
  if (typeof node === 'string') return node.charCodeAt(0) === 0 ? (names.get(node) ?? node) : node;
  if (node === null || typeof node !== 'object') return node;
  const value = values.get(node);
  if (value !== undefined) return value;
  if (Array.isArray(node)) return node.map((child) => instantiate(child, names, values));
  const copy = Object.getPrototypeOf(node) === null ? Object.create(null) : {};
  for (const key in node) copy[instantiate(key, names, values)] = instantiate(node[key], names, values);
  return copy;
}

/** The parser's result for this call from a cached shape, with the side effects the parse has. */
function fromTemplate(template, context) {
  const names = new Map();
  for (const [name, n] of nameClasses(context.attrNames)) names.set(nameStandIn(n), name);
  const values = new Map();
  for (const [standIn, key] of template.valueStandIns) values.set(standIn, context.attrVals[key]);
  for (const key of template.usedNames) delete context.unusedAttrNames?.[key];
  for (const key of template.usedValues) delete context.unusedAttrVals?.[key];
  return instantiate(template.tree, names, values);
}

/** The tree parsed with stand-ins, to copy for later calls of the same shape. */
function templateOf(parse, expression, context, usedNames, usedValues) {
  const classes = nameClasses(context.attrNames);
  const attrNames = {};
  for (const key in context.attrNames) attrNames[key] = nameStandIn(classes.get(context.attrNames[key]));
  const attrVals = {};
  const valueStandIns = new Map();
  for (const key in context.attrVals) {
    const standIn = { ...context.attrVals[key] };
    attrVals[key] = standIn;
    valueStandIns.set(standIn, key);
  }
  const tree = parse(expression, {
    context: {
      ...context,
      attrNames: context.attrNames && attrNames,
      attrVals: context.attrVals && attrVals,
      unusedAttrNames: {},
      unusedAttrVals: {},
    },
  });
  return { tree, valueStandIns, usedNames, usedValues };
}

/** Wraps a PEG parser module's `parse` (dynalite's validations call it as `parser.parse(str, {context})`). */
export function cacheParses(parser) {
  const parse = parser.parse;
  const templates = new Map();
  parser.parse = (expression, options) => {
    const context = options?.context;
    if (!context || READS_VALUES.test(expression)) return parse(expression, options);
    const shape = shapeOf(expression, context);
    const cached = templates.get(shape);
    if (cached) return fromTemplate(cached, context);
    const namesBefore = { ...context.unusedAttrNames };
    const valuesBefore = { ...context.unusedAttrVals };
    // Parsed as always: a call that fails keeps dynalite's own error, and is never cached.
    // The parsers answer their checks' errors as strings.
    const result = parse(expression, options);
    if (typeof result !== 'object' || result === null) return result;
    const template = templateOf(
      parse,
      expression,
      context,
      removedKeys(namesBefore, context.unusedAttrNames),
      removedKeys(valuesBefore, context.unusedAttrVals),
    );
    if (typeof template.tree === 'object' && template.tree !== null) {
      if (templates.size >= MAX_SHAPES) templates.clear();
      templates.set(shape, template);
    }
    return result;
  };
  return parser;
}
