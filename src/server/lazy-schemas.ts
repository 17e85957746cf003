import ajvCompiler, { type ValidatorFactory } from '@fastify/ajv-compiler';
import serializerCompiler, { type SerializerFactory } from '@fastify/fast-json-stringify-compiler';

/** A compiler factory as Fastify calls it: (shared schemas, options) → (route) → function. */
type Factory = (...args: unknown[]) => (route: unknown) => unknown;
type Validate = ((data: unknown) => unknown) & { errors?: unknown };
type Serialize = (data: unknown) => string;

/**
 * Fastify's own schema compilers (ajv for validation, fast-json-stringify for responses),
 * made lazy: a route's validator or serializer is compiled on its first use, or by `warmUp`
 * in the background once the server listens. Compiling all of them up front was a large
 * part of the start-up. `warmUp` still compiles every one soon after
 * start-up, so a broken schema shows in the process log then, not on a first request.
 */
export class LazySchemaCompilers {
  private readonly pending: (() => void)[] = [];

  // Fastify only calls these functions and reads `errors`: the casts hide the compilers' exact types.
  readonly compilersFactory = {
    buildValidator: this.lazyFactory(ajvCompiler() as unknown as Factory, (compile) => this.lazyValidator(compile as () => Validate)) as unknown as ValidatorFactory,
    buildSerializer: this.lazyFactory(serializerCompiler() as unknown as Factory, (compile) => this.lazySerializer(compile as () => Serialize)) as unknown as SerializerFactory,
  };

  /** Compiles what is still uncompiled, one schema per turn of the event loop so requests interleave. */
  warmUp(onError: (error: unknown) => void): void {
    const next = () => {
      const compile = this.pending.shift();
      if (compile === undefined) return;
      try {
        compile();
      } catch (error) {
        onError(error);
      }
      setImmediate(next).unref();
    };
    setImmediate(next).unref();
  }

  private lazyFactory(factory: Factory, wrap: (compile: () => unknown) => unknown): Factory {
    return (...args) => {
      const compiler = factory(...args);
      return (route) => wrap(() => compiler(route));
    };
  }

  private once<F>(compile: () => F): () => F {
    let compiled: F | undefined;
    const get = () => (compiled ??= compile());
    this.pending.push(get);
    return get;
  }

  private lazyValidator(compile: () => Validate): Validate {
    const real = this.once(compile);
    // Fastify reads the errors of a failed validation from the function itself.
    const validate: Validate = (data) => {
      const target = real();
      const valid = target(data);
      validate.errors = target.errors;
      return valid;
    };
    return validate;
  }

  private lazySerializer(compile: () => Serialize): Serialize {
    const real = this.once(compile);
    return (data) => real()(data);
  }
}
