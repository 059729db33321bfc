# Karp thesis, chapter 4: the run, plot and claim rules of its figures and
# tables (src/linearlens/manifests/karp_thesis.py lists them, with the issue that builds each). Its
# drawings are generated from the manifest (rules/manifests.smk). Rule names: karp_thesis_ch4_<verb>.
