// The calibration (blind-question) form's part (human_eval/blind_form.py): per image one
// choice, A, B or C; the shared script is form.js.
ibForm({
  key: "ib-blind-",
  columns: __COLUMNS__,
  units: function(B){ return B.items; },
  id: function(c){ return c.item; },
  noun: "Image",
  answered: "images answered.",
  missing: "Unanswered",
  done: function(a){ return a.choice; },
  row: function(B, rater, c, a, now){
    return [B.bundle_id, rater, c.item, c.unit_id, a.choice, a.saved_at || now];
  },
  store: function(answers, t){
    if (!t.dataset.item) return false;
    answers[t.dataset.item] = {choice: t.value, saved_at: new Date().toISOString()};
    return true;
  },
  inputs: function(c, a){ return ['input[data-item="' + c + '"][value="' + a.choice + '"]']; }
});
