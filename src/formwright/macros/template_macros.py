"""placeholder"""
def macros_in_template(template, base_dir):
    return []
