/** The math answer checker: extraction, normalisation, exact rationals, LaTeX translation and the layered check. */
export * from './extract.js';
export * from './normalize.js';
export * from './rational.js';
export * from './latex.js';
export * from './structure.js';
export * from './equivalence.js';
