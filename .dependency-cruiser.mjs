/**
 * Import-cycle check for `npm run lint`. Type-only imports count too: a cycle of types is the same
 * tangle for a reader (issue 11 found one through reconcile/ports.ts).
 */
export default {
  forbidden: [
    {
      name: 'no-circular',
      severity: 'error',
      comment: 'Modules must form a graph without cycles; split the shared types out instead.',
      from: {},
      to: { circular: true },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '^(node_modules|dist|build|\\.cache|coverage)/' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { extensions: ['.ts', '.js'] },
  },
};
