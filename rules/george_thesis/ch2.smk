# George thesis, chapter 2: the run, plot and claim rules of its figures
# (src/linearlens/manifests/george_thesis.py lists them, with the issue that builds each). Its
# drawings are generated from the manifest (rules/manifests.smk). Rule names: george_thesis_ch2_<verb>.
