"""Times the authors' Python sgd-prev (github.com/zhenhuan-yang/simple-pairwise)
for scripts/pyside/run.sh. Nothing of theirs is copied here: their modules
are imported by path from a checkout given on the command line.

  python3 driver.py PYREPO DATADIR one ETA BETA PASSES SEED
      one fixed-parameter run of their sgd-prev (alg/auc_fifo_hinge.py,
      hinge, l2 ball of radius BETA, constant step ETA/sqrt(PASSES*n_tr))
      on the first fold of a 5-fold split (n_tr = 0.8 n), called as their
      exp_test.py's auc_fix_para calls it; prints the call's CPU seconds
      (time.process_time) and the number of pair steps.
  python3 driver.py PYREPO DATADIR full SEED
      their Table-1 protocol: exp_cv.exp_cv over the 6 x 6 grid of
      (eta, beta) in 10^-3..10^2, 5 folds x 2 repeats, then
      exp_test.exp_test at the chosen cell, 5 folds x 5 repeats, both with
      10 passes (the options of their exp_cv.py and exp_command.py; the
      process pool of PYPROCS workers, default 2); prints the CPU seconds
      of this process and its reaped workers.

DATADIR holds data/ijcnn1 (LIBSVM), read by their utils.data_processing
(which min-max scales to [-1, 1]). Results are printed as "RESULT key value".
"""
import os
import resource
import sys
import time


def cpu_with_children():
    s = resource.getrusage(resource.RUSAGE_SELF)
    c = resource.getrusage(resource.RUSAGE_CHILDREN)
    return s.ru_utime + s.ru_stime + c.ru_utime + c.ru_stime


def main():
    if len(sys.argv) < 4:
        sys.exit(__doc__)
    pyrepo, datadir, mode = sys.argv[1], sys.argv[2], sys.argv[3]
    sys.path.insert(0, os.path.abspath(pyrepo))
    os.chdir(datadir)  # their loader reads ./data/<name>
    import numpy as np
    from sklearn.model_selection import RepeatedKFold
    import utils

    x, y = utils.data_processing('ijcnn1')
    n, dim = x.shape
    print('RESULT n %d' % n)
    print('RESULT d %d' % dim)
    if mode == 'one':
        eta, beta, passes, seed = float(sys.argv[4]), float(sys.argv[5]), int(sys.argv[6]), int(sys.argv[7])
        from alg.auc_fifo_hinge import auc_fifo_hinge
        options = {'n_pass': passes, 'rec_log': .5, 'rec': 100, 'log_res': True,
                   'proj_flag': True, 'eta_geo': 'const', 'eta': eta, 'beta': beta,
                   'dim': dim, 'n_split': 5}
        options['n_tr'] = int(4 / 5 * n)
        options['res_idx'] = utils.get_res_idx(options['n_pass'] * (options['n_tr'] - 1), options)
        options['etas'] = utils.get_etas(options['n_pass'] * options['n_tr'], eta, options)
        tr, te = next(RepeatedKFold(n_splits=5, n_repeats=1, random_state=seed).split(x))
        tr = tr[:options['n_tr']]
        np.random.seed(seed)
        c0, w0 = time.process_time(), time.perf_counter()
        aucs, times = auc_fifo_hinge(x[tr], y[tr], x[te], y[te], options)
        c1, w1 = time.process_time(), time.perf_counter()
        print('RESULT steps %d' % (options['n_pass'] * options['n_tr']))
        print('RESULT cpu_seconds %.6f' % (c1 - c0))
        print('RESULT wall_seconds %.6f' % (w1 - w0))
        # their own timer: the loop without the checkpoints' evaluations (wall)
        print('RESULT own_seconds %.6f' % times[-1])
        print('RESULT auc_last %.6f' % aucs[-1])
        print('RESULT auc_max %.6f' % np.max(aucs))
    elif mode == 'full':
        seed = int(sys.argv[4])
        np.random.seed(seed)
        from exp_cv import exp_cv
        from exp_test import exp_test
        options = {'n_proc': int(os.environ.get('PYPROCS', '2')), 'n_pass': 10, 'rec_log': .5,
                   'rec': 50, 'log_res': True, 'eta_list': 10. ** np.arange(-3, 3),
                   'beta_list': 10. ** np.arange(-3, 3), 'n_repeat': 2, 'n_split': 5,
                   'proj_flag': True, 'eta_geo': 'const', 'dim': dim}
        options['n_tr'] = int((options['n_split'] - 1) / options['n_split'] * n)
        c0, w0 = cpu_with_children(), time.perf_counter()
        ret = exp_cv(x, y, 'hinge', 'auc_fifo', options)
        options['eta'], options['beta'] = ret['eta_opt'], ret['beta_opt']
        options['n_repeat'] = 5
        auc, _ = exp_test(x, y, 'hinge', 'auc_fifo', options)
        c1, w1 = cpu_with_children(), time.perf_counter()
        print('RESULT eta %g' % ret['eta_opt'])
        print('RESULT beta %g' % ret['beta_opt'])
        print('RESULT auc %.6f' % np.max(auc['mean']))
        print('RESULT runs %d' % (36 * 5 * 2 + 5 * 5))
        print('RESULT cpu_seconds %.3f' % (c1 - c0))
        print('RESULT wall_seconds %.3f' % (w1 - w0))
    else:
        sys.exit('driver.py: mode is one or full')


if __name__ == '__main__':
    main()
