import { Type, type TSchema } from '@sinclair/typebox';

/** TypeBox shorthands the route schemas share. */

export const Nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);

/** An OpenAI-style list: `{ object: 'list', data: [...] }`. */
export const listOf = <T extends TSchema>(item: T) => Type.Object({ object: Type.Literal('list'), data: Type.Array(item) });
