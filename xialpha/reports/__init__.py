"""What people read about a sweep and a store: the report of a sweep and its saved selection
(`contents`, gathered as DataFrames), shown as terminal tables (`terminal`) or a self-contained HTML
page (`html`, with the plots of `plots`); estimates beside held-out values (`calibration`);
readable labels of configurations (`labels`); what a store holds, by id (`inventory`).
"""
