// memlab's retainer paths in a heap snapshot (retainers.test): for the
// nodes named argv[3], the path memlab computes from the root (its
// pathEdge chain), edge names joined by '/', indices folded to '*',
// with how many nodes have it; then the retained size memlab computes
// for the first node named argv[4], if given. Loaded with memlab's own
// parser (@memlab/heap-analysis), from the folder in NODE_PATH.
const {getFullHeapFromFile} = require('@memlab/heap-analysis');
(async () => {
  const heap = await getFullHeapFromFile(process.argv[2]);
  const paths = new Map();
  let retained = null;
  heap.nodes.forEach(n => {
    if (process.argv[4] && retained === null && n.name === process.argv[4])
      retained = n.retainedSize;
    if (n.name !== process.argv[3]) return;
    const steps = [];
    for (let m = n, k = 0; m && m.pathEdge && k < 100; k++) {
      const e = m.pathEdge;
      steps.unshift(typeof e.name_or_index === 'number' ? '*' : e.name_or_index);
      m = e.fromNode;
    }
    const p = steps.length ? steps.join('/') : '(unreachable)';
    paths.set(p, (paths.get(p) || 0) + 1);
  });
  for (const [p, n] of paths) console.log(n + ' ' + p);
  if (retained !== null) console.log('retained ' + retained);
})().catch(e => { console.error('memlab-paths: ' + e); process.exit(1); });
