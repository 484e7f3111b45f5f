// The rating form's part (human_eval/form.py): per case the KG-validity answer and three
// 0-5 ratings; the shared script is form.js.
ibForm({
  key: "ib-form-",
  columns: __COLUMNS__,
  units: function(B){ return B.cases; },
  id: function(c){ return c.case; },
  noun: "Case",
  answered: "cases fully answered.",
  missing: "Incomplete",
  done: function(a){
    return a.kg_valid && a.rating_1 != null && a.rating_2 != null && a.rating_3 != null;
  },
  row: function(B, rater, c, a, now){
    return [B.bundle_id, rater, c.case, c.unit_id, a.kg_valid, a.rating_1, a.rating_2,
            a.rating_3, a.saved_at || now];
  },
  store: function(answers, t){
    if (!t.dataset.case) return false;
    var a = answers[t.dataset.case] = answers[t.dataset.case] || Object.create(null);
    a[t.dataset.item] = t.dataset.item === "kg_valid" ? t.value : parseInt(t.value, 10);
    a.saved_at = new Date().toISOString();
    return true;
  },
  inputs: function(c, a){
    return Object.keys(a).map(function(item){
      return 'input[data-case="' + c + '"][data-item="' + item + '"][value="' + a[item] + '"]';
    });
  }
});
