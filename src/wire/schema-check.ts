/**
 * Plain-code checks derived from zod schemas: `plainCheckOf(schema)` reads
 * the schema's definition once and compiles it into one function of `typeof`
 * tests and property reads (the code a person would write by hand, built
 * with `new Function` as zod itself builds its object parsers), which costs
 * a fraction of `safeParse` on the proxy's path (decision 0126). The schema
 * stays the one declaration of a shape: adding a field to it changes the
 * check with it.
 *
 * Contract: the check is a sufficient condition. `true` means `safeParse`
 * succeeds on the value; `false` means "ask the schema", which then decides
 * and words any problem. Constructs it reads: objects (loose or stripping),
 * strings, booleans, literals, finite numbers with an integer format or
 * bounds, arrays, optional, unknown and any, and schemas registered with
 * `withPlainCheck` or `withTypeDispatch` (refinements and custom types, whose
 * code it cannot read). Anything else (a string length, a pattern, a
 * transform, a refinement not registered, a strict object, a union) yields
 * a check that always says "ask the schema": slower, never wrong. Owns this
 * derivation only.
 *
 * @module subagent-otel/wire/schema-check
 */
import type * as z from 'zod';

/** A plain predicate over a value already parsed from JSON (or handed over in process). Never throws. */
export type PlainCheck = (value: unknown) => boolean;

/** The parts of zod's definitions this module reads (zod 4's `_zod.def`, its introspection interface). */
interface Definition {
  readonly type: string;
  readonly checks?: readonly { readonly _zod: { readonly def: CheckDefinition } }[];
  readonly shape?: Record<string, z.ZodType>;
  readonly catchall?: z.ZodType;
  readonly innerType?: z.ZodType;
  readonly element?: z.ZodType;
  readonly values?: readonly unknown[];
}
interface CheckDefinition {
  readonly check: string;
  readonly format?: string;
  readonly value?: unknown;
  readonly inclusive?: boolean;
}

/**
 * A stand-in for "any string": the derived checks accept it exactly where
 * the schema accepts every string (a string without checks, `unknown`,
 * `any`, or an optional of these), and nowhere else (not by a literal). For a
 * caller that knows a value is some string without having decoded it.
 */
export const ANY_STRING: unknown = Symbol('any string');

/**
 * Objects told apart by a string `type`: for a type in `known`, the object
 * (or its field `field`, when given) must pass that type's schema; any other
 * type passes.
 */
interface TypeDispatch {
  readonly known: Readonly<Record<string, z.ZodType>>;
  readonly field?: string;
}
const registered = new WeakMap<z.ZodType, PlainCheck | TypeDispatch>();
const derived = new WeakMap<z.ZodType, PlainCheck>();

/**
 * Registers `check` as the plain check of `schema`, for a schema whose code
 * this module cannot read (a `z.custom`, a refinement). `check` must be a
 * sufficient condition of `schema.safeParse` succeeding (see the module
 * header); register it where the schema is declared. @returns `schema`.
 */
export function withPlainCheck<S extends z.ZodType>(schema: S, check: PlainCheck): S {
  registered.set(schema, check);
  return schema;
}

/**
 * Registers `schema` as accepting exactly the objects with a string `type`
 * that, when the type is a key of `known`, pass that schema too (content.ts's
 * `byType`, a refinement this module cannot read). @returns `schema`.
 */
export function withTypeDispatch<S extends z.ZodType>(schema: S, known: Readonly<Record<string, z.ZodType>>): S {
  registered.set(schema, { known });
  return schema;
}

/**
 * One plain check for objects told apart by a string `type` whose field
 * `field` is declared per type by `known`: true when the value is an object
 * with a string `type` and, for a type in `known`, its `field` passes that
 * schema's check. One compiled function for all types, for a hot path that
 * sees them all. Never throws.
 */
export function plainDispatchOf(known: Readonly<Record<string, z.ZodType>>, field: string): PlainCheck {
  return new Compiler().compileDispatch({ known, field });
}

/** The plain check of `schema` (see the module header), compiled once per schema object. Never throws. */
export function plainCheckOf(schema: z.ZodType): PlainCheck {
  const known = registered.get(schema) ?? derived.get(schema);
  if (typeof known === 'function') return known;
  // A stand-in first, so a schema that contains itself calls its own (finished) check.
  let check: PlainCheck = () => false;
  derived.set(schema, (value) => check(value));
  check = new Compiler().compile(schema);
  derived.set(schema, check);
  return check;
}

/** The source of one check: an expression over a variable, with helper functions and outside values it refers to. */
class Compiler {
  readonly #outside: unknown[] = [ANY_STRING, Object.prototype.hasOwnProperty];
  readonly #helpers: string[] = [];
  readonly #open = new Set<z.ZodType>();
  #names = 0;

  compile(schema: z.ZodType): PlainCheck {
    return this.#function(this.#test(schema, 'v'));
  }

  compileDispatch(dispatch: TypeDispatch): PlainCheck {
    return this.#function(this.#dispatch(dispatch, 'v'));
  }

  #function(test: string): PlainCheck {
    const source = `"use strict";\n${this.#helpers.join('\n')}\nreturn (v) => ${test};`;
    try {
      return new Function('o', source)(this.#outside) as PlainCheck;
    } catch {
      // Code generation forbidden (node --disallow-code-generation-from-strings): zod decides every value.
      return () => false;
    }
  }

  /** An expression that is true when the value of `x` (an expression without side effects) passes `schema`. */
  #test(schema: z.ZodType, x: string): string {
    const own = registered.get(schema);
    if (typeof own === 'function') return `${this.#refer(own)}(${x})`;
    if (this.#open.has(schema)) return `${this.#refer((value: unknown) => plainCheckOf(schema)(value))}(${x})`;
    this.#open.add(schema);
    try {
      return own !== undefined ? this.#dispatch(own, x) : this.#definition(schema._zod.def as unknown as Definition, x);
    } finally {
      this.#open.delete(schema);
    }
  }

  #definition(def: Definition, x: string): string {
    if ((def.checks ?? []).length > 0 && def.type !== 'number') return 'false';
    switch (def.type) {
      case 'string':
        return `(typeof ${x} === "string" || ${x} === o[0])`;
      case 'boolean':
        return `(typeof ${x} === "boolean")`;
      case 'number':
        return this.#number(
          (def.checks ?? []).map((c) => c._zod.def),
          x,
        );
      case 'literal':
        return `(${(def.values ?? []).map((value) => `${x} === ${this.#constant(value)}`).join(' || ') || 'false'})`;
      case 'unknown':
      case 'any':
        return 'true';
      case 'optional':
        return def.innerType === undefined ? 'false' : `(${x} === undefined || ${this.#test(def.innerType, x)})`;
      case 'array':
        return def.element === undefined ? 'false' : `${this.#arrayHelper(def.element)}(${x})`;
      case 'object':
        return this.#object(def, x);
      default:
        return 'false';
    }
  }

  /** Finite numbers, with zod's `safeint` format and lower or upper bounds; any other check asks the schema. */
  #number(checks: readonly CheckDefinition[], x: string): string {
    const parts = [`typeof ${x} === "number"`, `Number.isFinite(${x})`];
    for (const c of checks) {
      if (c.check === 'number_format' && c.format === 'safeint') parts[1] = `Number.isSafeInteger(${x})`;
      else if ((c.check === 'greater_than' || c.check === 'less_than') && Number.isFinite(c.value))
        parts.push(
          `${x} ${c.check === 'greater_than' ? '>' : '<'}${c.inclusive === true ? '=' : ''} ${String(c.value)}`,
        );
      else return 'false';
    }
    return `(${parts.join(' && ')})`;
  }

  /**
   * An object: not null, not an array, every declared field passing its
   * test. A field that is not optional must be present (zod rejects a
   * missing key even when its schema accepts `undefined`, as `unknown`
   * does). Extra keys pass (loose objects keep them, plain ones strip them);
   * a catch-all that is not `unknown` asks the schema.
   */
  #object(def: Definition, x: string): string {
    const catchall = def.catchall?._zod.def.type;
    if (def.shape === undefined || (catchall !== undefined && catchall !== 'unknown')) return 'false';
    const parts = [`typeof ${x} === "object"`, `${x} !== null`, `!Array.isArray(${x})`];
    for (const [key, schema] of Object.entries(def.shape)) {
      const field = `${x}[${JSON.stringify(key)}]`;
      if (schema._zod.optin !== 'optional')
        parts.push(`(${field} !== undefined || o[1].call(${x}, ${JSON.stringify(key)}))`);
      parts.push(this.#test(schema, field));
    }
    return `(${parts.join(' && ')})`;
  }

  #dispatch(dispatch: TypeDispatch, x: string): string {
    const type = `${x}.type`;
    const target = dispatch.field === undefined ? x : `${x}[${JSON.stringify(dispatch.field)}]`;
    let branches = 'true';
    for (const [name, schema] of Object.entries(dispatch.known).reverse())
      branches = `${type} === ${JSON.stringify(name)} ? ${this.#test(schema, target)} : ${branches}`;
    return `(typeof ${x} === "object" && ${x} !== null && !Array.isArray(${x}) && typeof ${type} === "string" && (${branches}))`;
  }

  /** The name of a helper function that checks an array of `element`. */
  #arrayHelper(element: z.ZodType): string {
    const name = `h${this.#names++}`;
    const item = `${name}e`;
    this.#helpers.push(
      `function ${name}(a) { if (!Array.isArray(a)) return false; for (let i = 0; i < a.length; i += 1) { const ${item} = a[i]; if (!(${this.#test(element, item)})) return false; } return true; }`,
    );
    return name;
  }

  /** A literal's value in the source: JSON text for strings, finite numbers, booleans and null; else an outside value. */
  #constant(value: unknown): string {
    if (typeof value === 'string' || typeof value === 'boolean' || value === null) return JSON.stringify(value);
    if (typeof value === 'number' && Number.isFinite(value) && !Object.is(value, -0)) return String(value);
    return this.#refer(value);
  }

  #refer(value: unknown): string {
    this.#outside.push(value);
    return `o[${this.#outside.length - 1}]`;
  }
}
