import { describe, expect, it } from 'vitest';
import {
  acceptedFields,
  type BodySpec,
  bodySchema,
  Problems,
  refuseUnknownFields,
  shapeOf,
} from '../../functions/control/fields';
import { GatewayError } from '../../functions/core/errors';

// The declarative body descriptions: the shapes errors print, the schema the OpenAPI document shows,
// and the refusals the validators throw, all from one table.

const SPEC: BodySpec = {
  title: 'a widget',
  description: 'A widget.',
  fields: {
    name: { schema: { type: 'string' }, description: 'Name.', required: true },
    size: { schema: { type: ['integer', 'null'] }, description: 'Size.' },
    mode: { schema: { enum: ['fast', 'slow'] }, description: 'Mode.' },
    tags: { schema: { type: 'array', items: { type: 'string' } }, description: 'Tags.' },
  },
};

const thrown = (fn: () => void) => {
  try {
    fn();
  } catch (error) {
    return error as GatewayError;
  }
  throw new Error('did not throw');
};

describe('body field tables', () => {
  it('print each field with its shape, required ones marked', () => {
    expect(shapeOf({ oneOf: [{ type: 'string' }, { const: 1 }] })).toBe('string|1');
    expect(acceptedFields(SPEC)).toBe(
      'name (string, required), size (integer|null), mode ("fast"|"slow"), tags (array of string)',
    );
  });

  it('give a JSON Schema that requires fields only when creating and refuses others', () => {
    const create = bodySchema(SPEC, { creating: true });
    expect(create.required).toEqual(['name']);
    expect(create.additionalProperties).toBe(false);
    expect((create.properties as Record<string, { description: string }>).size?.description).toBe('Size.');
    expect(bodySchema(SPEC, { creating: false }).required).toBeUndefined();
  });

  it('refuse an unknown field, naming it (prefixed when nested) and listing the accepted ones', () => {
    expect(() => refuseUnknownFields({ name: 'x', size: null }, SPEC)).not.toThrow();
    const error = thrown(() => refuseUnknownFields({ name: 'x', colour: 1, weight: 2 }, SPEC, 'widget.'));
    expect(error).toBeInstanceOf(GatewayError);
    expect(error.status).toBe(400);
    expect(error.param).toBe('widget.colour');
    expect(error.code).toBe('unknown_field');
    expect(error.message).toBe(
      `Unknown fields: widget.colour, widget.weight. A widget takes: ${acceptedFields(SPEC)}.`,
    );
  });

  it('collect problems: unknown fields first, param of the first, the accepted list once', () => {
    const problems = new Problems(SPEC);
    problems.unknown({ colour: 1 });
    problems.add('size', 'size must be an integer');
    const error = thrown(() => problems.throwIfAny('invalid_body'));
    expect(error.param).toBe('colour');
    expect(error.code).toBe('invalid_body');
    expect(error.message).toBe(
      `Invalid widget: colour is not a known field; size must be an integer. A widget takes: ${acceptedFields(SPEC)}.`,
    );
    expect(() => new Problems(SPEC).throwIfAny('invalid_body')).not.toThrow();
  });
});
