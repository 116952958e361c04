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
 * bounds, arrays, optional, nullable, catch (which always succeeds), plain
 * unions (any option's check passing), unknown and any, and schemas
 * registered with `withPlainCheck` or `withTypeDispatch` (refinements and
 * custom types, whose code it cannot read). Anything else (a string length,
 * a pattern, a transform, a default, a refinement not registered, a strict
 * object, a discriminated or exclusive union) yields a check that always
 * says "ask the schema": slower, never wrong.
 *
 * `unchangedCheckOf(schema)` is the stricter check for a reader that uses
 * the value itself instead of zod's output: `true` means `safeParse`
 * succeeds and its data equals the value member for member (what zod
 * returns reads the same as the value at every path; values parsed from
 * JSON deep-equal it, keys and all). So nothing is stripped or filled in and
 * no catch replaces a value: a catch passes what its inner schema passes
 * unchanged, a stripping object has no keys beyond its shape, a loose object
 * no own `__proto__` (zod drops it), a union takes an option's check only
 * when every option before it returns any value it accepts unchanged (zod
 * returns the first option that succeeds), and of the registered schemas
 * only a `z.custom` is read (zod returns its value as it is). Owns this
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
  readonly options?: readonly z.ZodType[];
  readonly discriminator?: string;
  readonly inclusive?: boolean;
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
/** The compiled checks, one cache per kind: `plainCheckOf`'s and `unchangedCheckOf`'s. */
const derived = { accepts: new WeakMap<z.ZodType, PlainCheck>(), unchanged: new WeakMap<z.ZodType, PlainCheck>() };
type Kind = keyof typeof derived;

/**
 * Registers `check` as the plain check of `schema`, for a schema whose code
 * this module cannot read (a `z.custom`, a refinement). `check` must be a
 * sufficient condition of `schema.safeParse` succeeding (see the module
 * header); register it where the schema is declared. For a `z.custom`, whose
 * data is the value itself, it serves `unchangedCheckOf` too. @returns
 * `schema`.
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
  return new Compiler('accepts').compileDispatch({ known, field });
}

/** The plain check of `schema` (see the module header), compiled once per schema object. Never throws. */
export function plainCheckOf(schema: z.ZodType): PlainCheck {
  const own = registered.get(schema);
  return typeof own === 'function' ? own : checkOf(schema, 'accepts');
}

/**
 * The check that `schema` returns `value` itself (see the module header):
 * true only when `safeParse` succeeds and its data equals the value member
 * for member, so a reader may use the value as it is. Compiled once per
 * schema object. Never throws.
 */
export function unchangedCheckOf(schema: z.ZodType): PlainCheck {
  return checkOf(schema, 'unchanged');
}

function checkOf(schema: z.ZodType, kind: Kind): PlainCheck {
  const cache = derived[kind];
  const known = cache.get(schema);
  if (known !== undefined) return known;
  // A stand-in first, so a schema that contains itself calls its own (finished) check.
  let check: PlainCheck = () => false;
  cache.set(schema, (value) => check(value));
  check = new Compiler(kind).compile(schema);
  cache.set(schema, check);
  return check;
}

/**
 * Whether `schema` returns every value it accepts unchanged (member for
 * member), whatever the value: the schemas before a union's chosen option
 * must be such, since zod returns the first option that succeeds. Objects
 * are not (a loose one drops `__proto__`, a stripping one unknown keys).
 */
function keepsEveryValue(schema: z.ZodType): boolean {
  const def = schema._zod.def as unknown as Definition;
  const own = registered.get(schema);
  if (own !== undefined) return typeof own === 'function' && isPlainCustom(def);
  const checks = def.checks ?? [];
  switch (def.type) {
    case 'string':
    case 'boolean':
    case 'literal':
    case 'unknown':
    case 'any':
    case 'custom':
      return checks.length === 0;
    case 'number':
      return checks.every((c) => isNumberCheck(c._zod.def));
    case 'optional':
    case 'nullable':
      // An optional whose inner schema has a default hands it `undefined` (see `#optional`); a default is not kept.
      return checks.length === 0 && def.innerType !== undefined && keepsEveryValue(def.innerType);
    case 'array':
      return checks.length === 0 && def.element !== undefined && keepsEveryValue(def.element);
    case 'union':
      return checks.length === 0 && (def.options ?? []).every(keepsEveryValue);
    default:
      return false;
  }
}

/** A `z.custom` without further checks: zod returns the value itself when it passes. */
function isPlainCustom(def: Definition): boolean {
  return def.type === 'custom' && (def.checks ?? []).length === 0;
}

/** A number check the compiled number test reads (`safeint` format, bounds), none of which changes the value. */
function isNumberCheck(c: CheckDefinition): boolean {
  return (
    (c.check === 'number_format' && c.format === 'safeint') ||
    ((c.check === 'greater_than' || c.check === 'less_than') && Number.isFinite(c.value))
  );
}

/** The source of one check: an expression over a variable, with helper functions and outside values it refers to. */
class Compiler {
  readonly #kind: Kind;
  readonly #outside: unknown[] = [ANY_STRING, Object.prototype.hasOwnProperty];
  readonly #helpers: string[] = [];
  readonly #open = new Set<z.ZodType>();
  #names = 0;

  constructor(kind: Kind) {
    this.#kind = kind;
  }

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
    const def = schema._zod.def as unknown as Definition;
    if (own !== undefined && this.#kind === 'unchanged' && !(typeof own === 'function' && isPlainCustom(def)))
      return 'false';
    if (typeof own === 'function') return `${this.#refer(own)}(${x})`;
    if (this.#open.has(schema)) {
      const kind = this.#kind;
      return `${this.#refer((value: unknown) => checkOf(schema, kind)(value))}(${x})`;
    }
    this.#open.add(schema);
    try {
      return own !== undefined ? this.#dispatch(own, x) : this.#definition(schema, def, x);
    } finally {
      this.#open.delete(schema);
    }
  }

  #definition(schema: z.ZodType, def: Definition, x: string): string {
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
        return def.innerType === undefined ? 'false' : this.#optional(schema, def.innerType, x);
      case 'nullable':
        return def.innerType === undefined ? 'false' : `(${x} === null || ${this.#test(def.innerType, x)})`;
      case 'catch':
        // zod's catch never fails; unchanged only where its inner schema keeps the value (the catch is then not used).
        if (this.#kind === 'accepts') return 'true';
        return def.innerType === undefined ? 'false' : this.#test(def.innerType, x);
      case 'union':
        return this.#union(def, x);
      case 'array':
        return def.element === undefined ? 'false' : `${this.#arrayHelper(def.element)}(${x})`;
      case 'object':
        return this.#object(def, x);
      default:
        return 'false';
    }
  }

  /**
   * `undefined` or what the inner schema accepts. Two kinds of optional run
   * the inner schema on `undefined` too, so `undefined` is theirs to judge:
   * `z.exactOptional` (which accepts only a missing key, not an `undefined`
   * value) and, for the unchanged check, an optional around a schema that
   * fills in a default for `undefined`.
   */
  #optional(schema: z.ZodType, inner: z.ZodType, x: string): string {
    const exact = schema._zod.traits.has('$ZodExactOptional');
    if (exact || (this.#kind === 'unchanged' && inner._zod.optin === 'defaulted')) return this.#test(inner, x);
    return `(${x} === undefined || ${this.#test(inner, x)})`;
  }

  /** Finite numbers, with zod's `safeint` format and lower or upper bounds; any other check asks the schema. */
  #number(checks: readonly CheckDefinition[], x: string): string {
    const parts = [`typeof ${x} === "number"`, `Number.isFinite(${x})`];
    for (const c of checks) {
      if (!isNumberCheck(c)) return 'false';
      if (c.check === 'number_format') parts[1] = `Number.isSafeInteger(${x})`;
      else
        parts.push(
          `${x} ${c.check === 'greater_than' ? '>' : '<'}${c.inclusive === true ? '=' : ''} ${String(c.value)}`,
        );
    }
    return `(${parts.join(' && ')})`;
  }

  /**
   * A plain union (zod returns the first option that succeeds): any option's
   * check passing. For the unchanged check, only the options up to the first
   * one that might change a value it accepts: an earlier option that succeeds
   * returns the value unchanged too. Discriminated and exclusive unions (which
   * pick or count their options) ask the schema.
   */
  #union(def: Definition, x: string): string {
    if (def.discriminator !== undefined || def.inclusive === false || def.options === undefined) return 'false';
    const options: z.ZodType[] = [];
    for (const option of def.options) {
      options.push(option);
      if (this.#kind === 'unchanged' && !keepsEveryValue(option)) break;
    }
    return `(${options.map((option) => this.#test(option, x)).join(' || ') || 'false'})`;
  }

  /**
   * An object: not null, not an array, every declared field passing its
   * test. A field that is not optional must be present (zod rejects a
   * missing key even when its schema accepts `undefined`, as `unknown`
   * does). Extra keys pass (loose objects keep them, plain ones strip them);
   * a catch-all that is not `unknown` asks the schema. For the unchanged
   * check, a stripping object must have no keys beyond its shape, and a loose
   * one no own `__proto__` (zod does not copy it).
   */
  #object(def: Definition, x: string): string {
    const catchall = def.catchall?._zod.def.type;
    if (def.shape === undefined || (catchall !== undefined && catchall !== 'unknown')) return 'false';
    // Symbol keys (which `Object.entries` would not show) and a declared `__proto__` (which zod skips): ask the schema.
    if (Object.getOwnPropertySymbols(def.shape).length > 0 || Object.hasOwn(def.shape, '__proto__')) return 'false';
    const name = `h${this.#names++}`;
    const shape = [`typeof a === "object"`, `a !== null`, `!Array.isArray(a)`];
    if (this.#kind === 'unchanged')
      shape.push(
        catchall === undefined ? `${this.#onlyKeysHelper(Object.keys(def.shape))}(a)` : `!o[1].call(a, "__proto__")`,
      );
    // Each field read once, into a local: a record's fields are tested several times over, and reads of
    // objects of many layouts (JSON.parse's, one per key order) are the slow part of a check.
    const loads: string[] = [];
    const parts: string[] = [];
    for (const [key, schema] of Object.entries(def.shape)) {
      const field = `${name}f${loads.length}`;
      loads.push(`const ${field} = a[${JSON.stringify(key)}];`);
      if (schema._zod.optin !== 'optional')
        parts.push(`(${field} !== undefined || o[1].call(a, ${JSON.stringify(key)}))`);
      parts.push(this.#test(schema, field));
    }
    this.#helpers.push(
      `function ${name}(a) { if (!(${shape.join(' && ')})) return false; ${loads.join(' ')} return ${parts.join(' && ') || 'true'}; }`,
    );
    return `${name}(${x})`;
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

  /** The name of a helper function that says whether an object has no enumerable keys but `keys` (own or inherited, as zod's `for...in`). */
  #onlyKeysHelper(keys: readonly string[]): string {
    const name = `h${this.#names++}`;
    const known = keys.map((key) => `k === ${JSON.stringify(key)}`).join(' || ') || 'false';
    this.#helpers.push(`function ${name}(a) { for (const k in a) if (!(${known})) return false; return true; }`);
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
