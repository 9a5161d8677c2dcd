"""What the pages teach, computed from runs, traces and the closed forms; no streamlit here (app/ shows it).

- ``recorded`` / ``replay`` / ``explain`` / ``guess``: the recorded runs, read back one iteration at a time, why a
  run was as fast as it was, and the learner as the draft;
- ``hood`` / ``hood_tree`` / ``kpolicy_runs`` / ``roofline`` / ``moe`` / ``tree_economics`` / ``serving`` /
  ``gpu_identity``: one iteration's mechanics (a chain's, and a token tree's), the K policies side by side, the
  batch-size model (dense, and a mixture of experts), what a token tree buys over a chain, switching speculation on
  in serving stacks, greedy identity on a GPU;
- ``unchanged`` / ``overlap`` / ``blockcheck``: why the output distribution is unchanged, Σ min(p, q) at any
  temperature, and the whole-block check run on two tiny models;
- ``domains`` / ``quiz`` / ``quiz_attempts`` / ``transfer`` / ``exercises`` / ``interview``: acceptance by domain,
  the quizzes (with the transfer questions' numbers drawn per attempt) and an attempt at them, graded, the worked
  exercises and the interview questions;
- ``path``: what each lesson page lets a learner do, and its take-away.
"""
